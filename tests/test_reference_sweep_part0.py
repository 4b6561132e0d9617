"""Part 0 of the reference sweep on the CPU backend (tests/reference_sweep.py says why in parts)."""

from __future__ import annotations

import pytest

from reference_sweep import CHUNKS, PARTS, REGISTRY, SOURCES, check_chunk, part


def test_the_chunks_cover_every_operator_of_every_source_once():
    assert {"aten", "vllm"} <= set(SOURCES)
    covered = [op for _source, ops in CHUNKS for op in ops]
    assert sorted(covered) == sorted(spec.id for spec in REGISTRY.operators(SOURCES))
    parted = [op for index in range(PARTS) for _source, ops in part(index)["argvalues"]
              for op in ops]
    assert sorted(parted) == sorted(covered), "every chunk in exactly one module"


@pytest.mark.parametrize(**part(0))
def test_reference_method_passes_every_operator_on_cpu(tmp_path, source, ops):
    check_chunk(tmp_path, source, ops)
