"""The cuBLAS source as a whole, as `kgb ops` lists it: at least 50 routines, and every routine
of the published KernelGenBench cuBLAS set (kgb_sources/cublas/inventory.py) under its cuBLAS
name."""

from __future__ import annotations

import json

import pytest

from conftest import kgb
from kgb_sources.cublas.inventory import PUBLISHED_CUBLAS


@pytest.fixture(scope="module")
def listed():
    done = kgb("ops", "--source", "cublas", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_kgb_ops_lists_at_least_50_cublas_routines(listed):
    assert len(listed) >= 50, len(listed)
    assert all(op["source"] == "cublas" and op["name"].startswith("cublas") for op in listed)


def test_every_published_cublas_routine_is_listed(listed):
    names = {op["name"] for op in listed}
    missing = sorted(set(PUBLISHED_CUBLAS) - names)
    assert not missing, f"published routines not listed: {missing}"
    tagged = {op["name"] for op in listed if "published" in op["tags"]}
    assert tagged == set(PUBLISHED_CUBLAS)
