"""The comparison rule: structure, dtype, NaN/Inf, then tolerance."""

from __future__ import annotations

import pytest
import torch

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.compare import compare_outputs
from kgb_core.operators import Rounded, Tolerance

TOL = Tolerance(rtol=1e-3, atol=1e-4)


def test_equal_tensors_pass_and_report_zero_error():
    x = torch.randn(5, 7)
    result = compare_outputs(x.clone(), x, TOL)
    assert result.ok and result.max_abs_error == 0.0


def test_error_just_inside_and_just_outside_the_tolerance():
    expected = torch.full((4,), 2.0)
    inside = expected + (1e-4 + 1e-3 * 2.0) * 0.99
    outside = expected + (1e-4 + 1e-3 * 2.0) * 1.01
    assert compare_outputs(inside, expected, TOL).ok
    result = compare_outputs(outside, expected, TOL)
    assert result.verdict == verdicts.WRONG_OUTPUT
    assert "outside rtol" in result.message


def test_nan_where_reference_is_finite_fails_whatever_the_tolerance():
    expected = torch.ones(3)
    actual = torch.tensor([1.0, float("nan"), 1.0])
    result = compare_outputs(actual, expected, Tolerance(rtol=1e9, atol=1e9))
    assert result.verdict == verdicts.WRONG_OUTPUT and "NaN/Inf" in result.message


def test_matching_infinities_pass_and_wrong_sign_fails():
    expected = torch.tensor([float("inf"), 1.0])
    assert compare_outputs(expected.clone(), expected, TOL).ok
    assert not compare_outputs(torch.tensor([-float("inf"), 1.0]), expected, TOL).ok


def test_shape_dtype_and_type_mismatches_have_their_own_verdict():
    expected = torch.zeros(2, 3)
    assert compare_outputs(torch.zeros(3, 2), expected, TOL).verdict == verdicts.WRONG_SHAPE_OR_DTYPE
    assert compare_outputs(torch.zeros(2, 3, dtype=torch.float64), expected,
                           TOL).verdict == verdicts.WRONG_SHAPE_OR_DTYPE
    assert compare_outputs([expected], expected, TOL).verdict == verdicts.WRONG_SHAPE_OR_DTYPE
    assert compare_outputs(expected, (expected, expected),
                           TOL).verdict == verdicts.WRONG_SHAPE_OR_DTYPE


def test_integers_must_match_exactly():
    expected = torch.tensor([1, 2, 3])
    result = compare_outputs(torch.tensor([1, 2, 4]), expected, Tolerance(0.0, 0.0))
    assert result.verdict == verdicts.WRONG_OUTPUT and "(2,)" in result.message


def test_tuples_are_compared_element_by_element():
    values, indices = torch.randn(4), torch.arange(4)
    ok = compare_outputs((values.clone(), indices.clone()), (values, indices), TOL)
    assert ok.ok
    bad = compare_outputs((values.clone(), indices.flip(0)), (values, indices), TOL)
    assert bad.verdict == verdicts.WRONG_OUTPUT and "output[1]" in bad.message


def test_relative_error_is_reported_only_where_rtol_governs():
    expected = torch.tensor([1e-9, 1.0])
    actual = torch.tensor([5e-5, 1.0 + 2e-4])
    result = compare_outputs(actual, expected, TOL)
    assert result.ok  # 5e-5 is within atol, however large the ratio to 1e-9
    assert result.max_rel_error == pytest.approx(2e-4, rel=1e-3)


FP16_LARGEST = torch.finfo(torch.float16).max  # 65504; from 65520 on, values round to inf
FP16_TOL = Tolerance(rtol=1e-3, atol=1e-4)


def _fp16(*values):
    return torch.tensor(values, dtype=torch.float16)


def test_inf_next_to_the_largest_finite_value_passes_only_where_the_tolerance_spans_the_step():
    """fp16's 65504 and inf are neighbours: a correct product just short of 65520 rounds to
    either (the H200's cumprod failure). With no unrounded value, a reference of 65504 puts
    the truth at most one step (32) below the threshold; inf anywhere else, or of the other
    sign, still fails."""
    expected = _fp16(-FP16_LARGEST, FP16_LARGEST, 1.0)
    actual = _fp16(float("-inf"), float("inf"), 1.0)
    assert compare_outputs(actual, expected, FP16_TOL).ok
    # rtol 1e-4 admits 6.6 at 65504, not the step of 32 to the threshold.
    assert not compare_outputs(actual, expected, Tolerance(rtol=1e-4, atol=1e-4)).ok
    for wrong in (_fp16(float("inf"), FP16_LARGEST, 1.0),                 # sign flipped
                  _fp16(float("-inf"), float("inf"), float("inf"))):      # far from it
        result = compare_outputs(wrong, expected, FP16_TOL)
        assert result.verdict == verdicts.WRONG_OUTPUT, wrong


def test_the_largest_finite_value_against_an_inf_reference_needs_the_unrounded_truth():
    """A reference of inf says only that the truth is 65520 or more: without the unrounded
    value, 65504 against it could be a kernel that saturates, whatever the product."""
    result = compare_outputs(_fp16(FP16_LARGEST), _fp16(float("inf")), FP16_TOL)
    assert result.verdict == verdicts.WRONG_OUTPUT and "reference is inf" in result.message


def test_an_unrounded_reference_decides_both_sides_of_the_threshold_by_the_tolerance():
    """With the truth at hand (``Rounded``), either neighbour passes where the truth is within
    atol + rtol |truth| of the threshold 65520, and neither passes where it is further."""
    def judged(actual, truth, tolerance=FP16_TOL):
        truth = torch.tensor(truth, dtype=torch.float64)
        return compare_outputs(actual, Rounded(truth.to(torch.float16), truth), tolerance)

    # The H200's element: truth -65519.93, reference -65504, the kernel -inf; 0.07 from the
    # threshold passes even at rtol 1e-5, where the rounded reference alone could not tell.
    assert judged(_fp16(float("-inf")), [-65519.9256476452]).ok
    assert judged(_fp16(float("-inf")), [-65519.9256476452], Tolerance(1e-5, 1e-4)).ok
    # Past the threshold, the kernel on the other side: 65504 against a reference of inf.
    assert judged(_fp16(FP16_LARGEST), [65520.5]).ok
    # A saturating kernel: the truth is far past the threshold, 65504 is off by a factor 15.
    saturated = judged(_fp16(FP16_LARGEST, -FP16_LARGEST), [1e6, -65520.5])
    assert saturated.verdict == verdicts.WRONG_OUTPUT and "(0,)" in saturated.message
    # Near, but not within the tolerance: 10 past the threshold at rtol 1e-4 (6.6 allowed).
    assert not judged(_fp16(FP16_LARGEST), [65530.0], Tolerance(1e-4, 1e-4)).ok
    assert not judged(_fp16(float("inf")), [65500.0], Tolerance(1e-4, 1e-4)).ok  # 65504
    # Other sign, and an inf where the reference is finite and not the largest value.
    assert not judged(_fp16(float("-inf")), [65519.9]).ok
    assert not judged(_fp16(float("inf")), [65400.0]).ok


def test_a_rounded_reference_is_compared_by_its_rounded_value():
    truth = torch.tensor([1.0 / 3.0, 2.0], dtype=torch.float64)
    expected = Rounded(truth.to(torch.float16), truth)
    assert compare_outputs(truth.to(torch.float16), expected, FP16_TOL).ok
    assert compare_outputs(truth.float(), expected, FP16_TOL).verdict \
        == verdicts.WRONG_SHAPE_OR_DTYPE
    assert not compare_outputs(_fp16(0.33, 2.0), expected, Tolerance(1e-4, 1e-4)).ok
    with pytest.raises(TypeError):
        compare_outputs(truth, Rounded(truth.to(torch.float16), truth[:1]), FP16_TOL)


def test_complex_outputs_are_compared_without_an_overflow_edge():
    x = torch.tensor([1 + 2j, float("inf") + 0j], dtype=torch.complex64)
    assert compare_outputs(x.clone(), x, TOL).ok
    assert compare_outputs(x + 1, x, TOL).verdict == verdicts.WRONG_OUTPUT


def test_complex_outputs_are_compared_in_the_complex_plane():
    """An error only in the imaginary part fails; the tolerance bounds |a - e| against |e|."""
    expected = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
    result = compare_outputs(expected + 1j, expected, TOL)
    assert result.verdict == verdicts.WRONG_OUTPUT and result.max_abs_error == pytest.approx(1.0)
    # 1e-3 * |3 - 1j| = 3.16e-3 allows 3e-3 off in the imaginary part alone
    assert compare_outputs(expected + torch.tensor([0, 3e-3j]), expected, TOL).ok
