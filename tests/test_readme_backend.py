"""A backend plugin written from plugins/README.md alone (tests/data/readme_backend/, under 60
lines, for a made-up chip): the README's one path is enough to be listed, probed step by step,
emulated, and to pass every conformance check a vendor's plugin passes."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from conftest import kgb
from kgb_core.plugin_conformance import BackendPluginConformance

FIXTURE = Path(__file__).resolve().parent / "data" / "readme_backend"
PLUGIN = FIXTURE / "kgb_backend_toychip" / "__init__.py"
sys.path.insert(0, str(FIXTURE))
import kgb_backend_toychip  # noqa: E402 - the fixture's folder is on the path just above

ENV = {"PYTHONPATH": os.pathsep.join([str(FIXTURE), os.environ.get("PYTHONPATH", "")]),
       "KGB_EXTRA_PLUGINS": "kgb_backend_toychip"}


def test_it_is_short():
    assert len(PLUGIN.read_text().splitlines()) < 60


def test_kgb_backends_lists_it_and_doctor_shows_its_probe_steps():
    listed = {b["name"]: b for b in json.loads(kgb("backends", "--json", env=ENV).stdout)}
    assert not listed["toychip"]["available"]
    assert "needs torch_toy and a ToyChip device" in listed["toychip"]["reason"]
    doctor = kgb("doctor", "--backend", "toychip", env=ENV)
    assert doctor.returncode == 1  # the chip is not here
    assert "MISSING toy-smi on PATH" in doctor.stdout
    assert "MISSING torch_toy installed" in doctor.stdout


def test_its_quirks_run_through_the_pipeline_in_emulation(tmp_path):
    db = tmp_path / "toy.db"
    done = kgb("run", "--backend", "cpu", "--emulate", "toychip", "--op", "aten.sort",
               "--op", "aten.neg", "--method", "reference", "--no-timing", "--seed", "0",
               "--db", str(db), env=ENV)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT op, verdict FROM results WHERE emulates='toychip'"))
    assert rows == {"aten.sort": "skipped_denied", "aten.neg": "pass"}


class TestReadmeBackendConformance(BackendPluginConformance):
    module = kgb_backend_toychip
    entry_name = "kgb-backend-toychip"
    backend_name = "toychip"
    backend_class = kgb_backend_toychip.ToyChipBackend
    device_type = "toy"
    vendor_runtimes = ("torch_toy",)
    cited_sources = ("ToyChip Triton notes",)
    expected_skipped_dtypes = {"float64"}
    expected_max_num_warps = 8
    expected_denied = {"aten.sort"}

    @pytest.fixture(autouse=True)
    def _importable_in_a_fresh_interpreter(self, monkeypatch):
        monkeypatch.setenv("PYTHONPATH", ENV["PYTHONPATH"])
