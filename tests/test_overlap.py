"""The judge's test of outputs whose elements share memory (kgb_core/evaluation/overlap.py)."""

from __future__ import annotations

import torch

from kgb_core.evaluation.overlap import overlapping


def test_dense_layouts_permuted_or_sliced_are_cleared():
    base = torch.empty(6, 8)
    assert overlapping([base]) is None
    assert overlapping([base.t()]) is None
    assert overlapping([base[:, ::2]]) is None
    assert overlapping([torch.empty(2, 3, 4).permute(2, 0, 1)]) is None
    assert overlapping([torch.empty(0, 3).expand(0, 3)]) is None  # no element at all


def test_expanded_and_overlapping_views_are_found():
    one = torch.empty(1)
    assert "strides (0, 0)" in overlapping([one.view(1, 1).expand(4, 5)])
    rows = torch.empty(10).as_strided((4, 5), (1, 1))  # each row one element on
    assert "(1, 1)" in overlapping([rows])


def test_a_layout_the_strides_cannot_clear_is_counted():
    # Strides (2, 3) over shape (3, 2) reach 0, 3, 2, 5, 4, 7: interleaved, each element once.
    interleaved = torch.empty(8).as_strided((3, 2), (2, 3))
    assert overlapping([interleaved]) is None
    clashing = torch.empty(8).as_strided((3, 2), (2, 2))  # reaches 2 and 4 twice
    assert overlapping([clashing]) is not None


def test_outputs_may_be_views_of_one_buffer_but_not_share_elements():
    buffer = torch.empty(12)
    assert overlapping([buffer[:6], buffer[6:]]) is None
    assert "2 outputs share" in overlapping([buffer[:7], buffer[6:]])
    as_bytes = torch.empty(8, dtype=torch.uint8)
    assert overlapping([as_bytes[:4].view(torch.int32), as_bytes[4:]]) is None
    assert overlapping([as_bytes[:4].view(torch.int32), as_bytes[3:]]) is not None
