"""Part 2 of the reference sweep on the CPU backend (tests/reference_sweep.py says why in parts)."""

from __future__ import annotations

import pytest

from reference_sweep import check_chunk, part


@pytest.mark.parametrize(**part(2))
def test_reference_method_passes_every_operator_on_cpu(tmp_path, source, ops):
    check_chunk(tmp_path, source, ops)
