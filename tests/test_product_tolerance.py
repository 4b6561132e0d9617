"""aten.prod and aten.cumprod in fp32: the per-case rtol (4 x 2^-24 x sqrt(N), never below
1e-5; see kgb_sources/aten/reductions.py, _fp32_product_rtol) holds for a correct fp32 product
over the longest case, against the float64 reference, and rejects a product that is one factor
off. Torch on the CPU only: the products are computed here step by step in fp32, the way a
kernel that multiplies in fp32 does, and not by torch's CPU prod/cumprod (which may multiply
fp32 in float64).
"""

from __future__ import annotations

import math

import pytest
import torch

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.compare import compare_outputs
from kgb_core.operators import InputContext
from kgb_core.plugins import load_registry
from kgb_sources.aten.reductions import FP32_UNIT_ROUNDOFF, reduced_length

REGISTRY = load_registry()
OPS = ("prod", "cumprod")
# The standard deviation of one rounding's relative error, in units of 2^-24: ulp/sqrt(12)
# over a log-uniformly distributed mantissa m in [1, 2), 2 sqrt(E[1/m^2] / 12).
ROUNDING_SIGMA = 2 * math.sqrt((3 / 8 / math.log(2)) / 12)


def _spec(op):
    return REGISTRY.operator(f"aten.{op}")


def _longest_case(op):
    return max(_spec(op).cases, key=lambda case: reduced_length(case.params))


def _inputs(op, case, seed=0):
    x, dim = _spec(op).make_inputs(InputContext(case, "float32", seed, "cpu"))
    return x, dim


def _fp32_prefix_products(x, dim, *, skip=None, repeat=None, exclusive=False, last_only=False):
    """x's prefix products along dim, one fp32 multiply at a time, as a sequential kernel does.

    The wrong variants a kernel can fall into: ``skip`` leaves factor ``skip`` out, ``repeat``
    multiplies factor ``repeat`` in twice, ``exclusive`` writes each prefix before its own
    factor (the scan off by one). ``last_only`` returns only the full product (prod's output).
    """
    moved = x.movedim(dim, -1)
    rows = moved.reshape(-1, moved.shape[-1]).contiguous()
    accumulator = torch.ones(rows.shape[0], dtype=torch.float32)
    prefixes = None if last_only else torch.empty_like(rows)
    for index in range(rows.shape[1]):
        before = accumulator
        if index != skip:
            accumulator = accumulator * rows[:, index]
        if index == repeat:
            accumulator = accumulator * rows[:, index]
        if prefixes is not None:
            prefixes[:, index] = before if exclusive else accumulator
    if last_only:
        return accumulator.reshape(moved.shape[:-1])
    return prefixes.reshape(moved.shape).movedim(-1, dim)


def _fp32_tree_product(x, dim):
    """x's product along dim in fp32 by pairwise halving, as a blocked parallel reduction."""
    moved = x.movedim(dim, -1)
    rows = moved.reshape(-1, moved.shape[-1]).contiguous()
    while rows.shape[1] > 1:
        if rows.shape[1] % 2:
            rows = torch.cat([rows, torch.ones(rows.shape[0], 1)], dim=1)
        rows = rows[:, 0::2] * rows[:, 1::2]
    return rows[:, 0].reshape(moved.shape[:-1])


def _fp32_kernel(op, x, dim, **variant):
    return _fp32_prefix_products(x, dim, last_only=op == "prod", **variant)


def _outside(actual, expected, tolerance):
    """The fraction of elements outside ``atol + rtol * |expected|``."""
    error = (actual.double() - expected.double()).abs()
    return float((error > tolerance.atol + tolerance.rtol * expected.double().abs())
                 .double().mean())


# The failing side first: a product one factor off must be rejected at the loosened rtol.

def _wrong_variants(op, length):
    # Which factor: the last (a loop bound off by one), one at a block boundary (a carry
    # applied twice), the first (a scan that drops its initial carry).
    variants = {"last_factor_dropped": {"skip": length - 1},
                "block_boundary_factor_repeated": {"repeat": 1024}}
    if op == "cumprod":
        variants.update({"first_factor_dropped": {"skip": 0},
                         "exclusive_scan": {"exclusive": True}})
    return variants


@pytest.mark.parametrize("op,variant", [
    (op, name) for op in OPS
    for name in _wrong_variants(op, reduced_length(_longest_case(op).params))])
def test_product_one_factor_off_is_rejected(op, variant):
    spec, case = _spec(op), _longest_case(op)
    x, dim = _inputs(op, case)
    tolerance = spec.tolerance("float32", case.params)
    wrong = _fp32_kernel(op, x, dim, **_wrong_variants(op, x.shape[dim])[variant])
    expected = spec.reference(x, dim)
    comparison = compare_outputs(wrong, expected, tolerance)
    assert comparison.verdict == verdicts.WRONG_OUTPUT, comparison.message
    # Not a near miss: the factor flips the sign of about half the outputs it touches, and the
    # last-factor variants touch only a scan's last column.
    touched = 1 / x.shape[dim] if op == "cumprod" and variant == "last_factor_dropped" else 1
    assert _outside(wrong, expected.value, tolerance) > 0.25 * touched


def test_cumprod_along_the_wrong_dim_is_rejected():
    spec, case = _spec("cumprod"), _longest_case("cumprod")
    x, dim = _inputs("cumprod", case)
    other_dim = 1 - dim  # long_sequence is 2-D: the same shape, scanned the other way
    wrong = _fp32_prefix_products(x, other_dim)
    tolerance = spec.tolerance("float32", case.params)
    comparison = compare_outputs(wrong, spec.reference(x, dim), tolerance)
    assert comparison.verdict == verdicts.WRONG_OUTPUT, comparison.message


# The passing side.

@pytest.mark.parametrize("op", OPS)
def test_fp32_sequential_product_over_longest_case_is_within_tolerance(op):
    spec, case = _spec(op), _longest_case(op)
    length = reduced_length(case.params)
    assert length >= 32768, f"{case.name} is no longer the long case this test is about"
    tolerance = spec.tolerance("float32", case.params)
    assert tolerance.rtol == pytest.approx(4 * FP32_UNIT_ROUNDOFF * math.sqrt(length))
    for seed in (0, 1):  # the evaluator's default seeds
        x, dim = _inputs(op, case, seed)
        actual = _fp32_kernel(op, x, dim)
        comparison = compare_outputs(actual, spec.reference(x, dim), tolerance)
        assert comparison.ok, f"seed {seed}: {comparison.message}"
        # Where the margin stands: measured at 1.1e-5 to 1.9e-5, against 4.3e-5 and 4.8e-5.
        assert comparison.max_rel_error < 0.6 * tolerance.rtol


def test_fp32_tree_product_over_longest_case_is_within_tolerance():
    spec, case = _spec("prod"), _longest_case("prod")
    tolerance = spec.tolerance("float32", case.params)
    x, dim = _inputs("prod", case)
    comparison = compare_outputs(_fp32_tree_product(x, dim), spec.reference(x, dim), tolerance)
    assert comparison.ok, comparison.message


def test_rounding_error_random_walks_as_the_rtol_derivation_says():
    """The derivation's sigma, 0.42 x 2^-24 x sqrt(N - 1), against prod's 600 full products."""
    spec, case = _spec("prod"), _longest_case("prod")
    x, dim = _inputs("prod", case)
    truth = torch.prod(x.double(), dim)
    relative = (_fp32_kernel("prod", x, dim).double() - truth) / truth
    sigma = ROUNDING_SIGMA * FP32_UNIT_ROUNDOFF * math.sqrt(x.shape[dim] - 1)
    assert ROUNDING_SIGMA == pytest.approx(0.42, abs=0.01)
    assert 0.8 < float(relative.std()) / sigma < 1.2
    assert abs(float(relative.mean())) < 0.2 * sigma  # round-to-nearest is unbiased
    assert spec.tolerance("float32", case.params).rtol > 9 * sigma


# The rule itself.

@pytest.mark.parametrize("op", OPS)
def test_only_fp32_cases_longer_than_1759_loosen_rtol(op):
    spec = _spec(op)
    for case in spec.cases:
        length = reduced_length(case.params)
        rtol = spec.tolerance("float32", case.params).rtol
        assert rtol == (1e-5 if length <= 1759 else pytest.approx(4 * 2**-24 * math.sqrt(length)))
        assert spec.tolerance("float32", case.params).atol == 1e-4
        assert spec.tolerance("float16", case.params).rtol == 1e-3
        assert spec.tolerance("bfloat16", case.params).rtol == 1.6e-2


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_reference_multiplies_in_float64_and_rounds_once(op, dtype):
    spec = _spec(op)
    case = next(case for case in spec.cases if case.name == "long_row_negative_dim")
    x, dim = spec.make_inputs(InputContext(case, dtype, 0, "cpu"))
    exact = getattr(torch, op)(x.double(), dim)
    reference = spec.reference(x, dim)
    assert torch.equal(reference.value, exact.to(x.dtype))
    # The float64 product comes along, for the overflow edge (evaluation/compare.py).
    assert torch.equal(reference.unrounded, exact)
    # Timing still races the native call.
    assert torch.equal(spec.timing_baseline(x, dim), getattr(torch, op)(x, dim))
