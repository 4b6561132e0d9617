"""Comparing a candidate's output with the reference's, structure first, then values.

Runs inside the worker (imports torch). The rule is assert_close's: the dtype must match
exactly, then ``|actual - expected| <= atol + rtol * |expected|`` elementwise; NaN or Inf in
the output where the reference is finite fails, whatever the tolerance, with one exception at
the edge of the dtype's range (``_overflow_edge``), judged on the reference's unrounded value
where it gives one (``Rounded``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.exchange import Opaque
from kgb_core.evaluation.products import Bounded
from kgb_core.operators import Rounded, Tolerance, WithTolerance


@dataclass
class Comparison:
    verdict: str = verdicts.PASS
    message: str = ""
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0

    @property
    def ok(self) -> bool:
        return self.verdict == verdicts.PASS

    def absorb(self, other: "Comparison") -> None:
        self.max_abs_error = max(self.max_abs_error, other.max_abs_error)
        self.max_rel_error = max(self.max_rel_error, other.max_rel_error)
        if self.ok and not other.ok:
            self.verdict, self.message = other.verdict, other.message


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"Tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
    if isinstance(value, Opaque):  # what the runner said the candidate returned
        return value.type_name
    return type(value).__name__


def compare_outputs(actual: Any, expected: Any, tolerance: Tolerance, where: str = "output") -> Comparison:
    if isinstance(expected, Bounded):
        return _compare_tensors(actual, expected.value, tolerance, where, bounded=expected)
    if isinstance(expected, WithTolerance):
        if isinstance(actual, WithTolerance):
            actual = actual.value
        return compare_outputs(actual, expected.value, expected.tolerance, where)
    if isinstance(expected, Rounded):
        if not (isinstance(expected.value, torch.Tensor)
                and isinstance(expected.unrounded, torch.Tensor)
                and expected.unrounded.shape == expected.value.shape):
            raise TypeError("a reference's Rounded must hold two tensors of the same shape")
        return _compare_tensors(actual, expected.value, tolerance, where, expected.unrounded)
    if isinstance(expected, torch.Tensor):
        return _compare_tensors(actual, expected, tolerance, where)
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return Comparison(verdicts.WRONG_SHAPE_OR_DTYPE,
                              f"{where}: expected a sequence of {len(expected)} values, got "
                              f"{_describe(actual)}"
                              + (f" of length {len(actual)}" if isinstance(actual, (tuple, list)) else ""))
        total = Comparison()
        for index, (a, e) in enumerate(zip(actual, expected)):
            total.absorb(compare_outputs(a, e, tolerance, f"{where}[{index}]"))
        return total
    if expected is None:
        if actual is not None:
            return Comparison(verdicts.WRONG_SHAPE_OR_DTYPE, f"{where}: expected None, got {_describe(actual)}")
        return Comparison()
    if isinstance(expected, (bool, int, float)):
        if isinstance(actual, torch.Tensor) and actual.numel() == 1:
            actual = actual.item()
        if not isinstance(actual, (bool, int, float)):
            return Comparison(verdicts.WRONG_SHAPE_OR_DTYPE,
                              f"{where}: expected a Python number, got {_describe(actual)}")
        return _compare_tensors(torch.tensor(actual, dtype=torch.float64),
                                torch.tensor(expected, dtype=torch.float64), tolerance, where)
    raise TypeError(f"reference returned an unsupported type {type(expected).__name__}")


def _compare_tensors(actual: Any, expected: torch.Tensor, tolerance: Tolerance, where: str,
                     unrounded: torch.Tensor | None = None,
                     bounded: Bounded | None = None) -> Comparison:
    if not isinstance(actual, torch.Tensor):
        return Comparison(verdicts.WRONG_SHAPE_OR_DTYPE,
                          f"{where}: expected {_describe(expected)}, got {_describe(actual)}")
    if actual.shape != expected.shape:
        return Comparison(verdicts.WRONG_SHAPE_OR_DTYPE,
                          f"{where}: shape {tuple(actual.shape)}, expected {tuple(expected.shape)}")
    if actual.dtype != expected.dtype:
        return Comparison(verdicts.WRONG_SHAPE_OR_DTYPE,
                          f"{where}: dtype {actual.dtype}, expected {expected.dtype}")
    if actual.device != expected.device:
        return Comparison(verdicts.WRONG_SHAPE_OR_DTYPE,
                          f"{where}: on device {actual.device}, expected {expected.device}")
    if expected.numel() == 0:
        return Comparison()
    if not (expected.dtype.is_floating_point or expected.dtype.is_complex):
        mismatched = int((actual != expected).sum().item())
        if mismatched:
            index = _first_index(actual != expected, expected.shape)
            return Comparison(verdicts.WRONG_OUTPUT,
                              f"{where}: {mismatched} of {expected.numel()} elements differ "
                              f"(exact match required); first at {index}: got "
                              f"{actual[index].item()}, expected {expected[index].item()}",
                              max_abs_error=float((actual.double() - expected.double()).abs().max().item()))
        return Comparison()

    # Complex values in complex128, not .double(), which drops the imaginary part: the error
    # is then |a - e| in the complex plane, assert_close's rule for complex tensors.
    wide = torch.complex128 if expected.dtype.is_complex else torch.float64
    a = actual.to(wide)
    e = expected.to(wide) if bounded is None else bounded.exact.to(device=a.device, dtype=wide)
    expected_finite, actual_finite = torch.isfinite(e), torch.isfinite(a)
    edge = _overflow_edge(a, e, actual_finite & expected_finite, expected.dtype, tolerance,
                          unrounded)
    bad_nonfinite = ~actual_finite & expected_finite & ~edge
    # Non-finite reference values must be matched exactly (same inf sign, NaN where NaN).
    nonfinite_mismatch = ~expected_finite & ~((a == e) | (torch.isnan(a) & torch.isnan(e)) | edge)
    diff = torch.where(expected_finite & actual_finite, (a - e).abs(), 0.0)
    # Relative error only where rtol is what bounds it (|expected| > atol): near zero the
    # ratio is meaningless and atol governs, so reporting it there would only mislead.
    rel = diff / e.abs().clamp_min(torch.finfo(torch.float64).tiny)
    rtol_governs = e.abs() > max(tolerance.atol, torch.finfo(torch.float64).tiny)
    result = Comparison(max_abs_error=float(diff.max().item()),
                        max_rel_error=float(torch.where(rtol_governs, rel,
                                                        torch.zeros_like(rel)).max().item()))
    if bool(bad_nonfinite.any()):
        count = int(bad_nonfinite.sum().item())
        index = _first_index(bad_nonfinite, expected.shape)
        result.verdict = verdicts.WRONG_OUTPUT
        result.message = (f"{where}: {count} NaN/Inf values where the reference is finite; first at "
                          f"{index}: got {actual[index].item()}, expected {expected[index].item()}")
        return result
    if bool(nonfinite_mismatch.any()):
        index = _first_index(nonfinite_mismatch, expected.shape)
        result.verdict = verdicts.WRONG_OUTPUT
        result.message = (f"{where}: reference is {expected[index].item()} at {index}, got "
                          f"{actual[index].item()}")
        return result
    if bounded is None:
        allowed = tolerance.atol + tolerance.rtol * e.abs()
        rule = f"rtol={tolerance.rtol:g} atol={tolerance.atol:g}"
    else:
        allowed = bounded.bound.to(device=a.device, dtype=torch.float64)
        rule = bounded.rule
    outside = (diff > allowed) & expected_finite
    if bool(outside.any()):
        count = int(outside.sum().item())
        index = _first_index(outside, expected.shape)
        result.verdict = verdicts.WRONG_OUTPUT
        bound_here = "" if bounded is None else f" (bound there {allowed[index].item():.3g})"
        result.message = (f"{where}: {count} of {expected.numel()} elements outside {rule}; "
                          f"max abs error {result.max_abs_error:.3g}; first at {index}: got "
                          f"{actual[index].item():.6g}, expected {e[index].item():.6g}"
                          f"{bound_here}")
    return result


def _overflow_edge(a: torch.Tensor, e: torch.Tensor, both_finite: torch.Tensor,
                   dtype: torch.dtype, tolerance: Tolerance,
                   unrounded: torch.Tensor | None) -> torch.Tensor:
    """Where one side is the dtype's largest finite value and the other the infinity of the
    same sign, and both can be right: the two are neighbours, every value from the overflow
    threshold (the largest finite value plus half its step: fp16's 65520) on rounds to inf, and
    two correct computations of a value near that threshold land on either side of it
    (measured on an H200: cumprod of fp16 factors, float64 truth -65519.93, reference -65504,
    a correct fp32 running product -inf). Accepted where the truth lies within the tolerance
    of the threshold, ``|truth - threshold| <= atol + rtol * |truth|``, the rule every other
    value is held to; an inf where the reference is any other finite value still fails.

    The truth is the reference's ``unrounded`` value (``Rounded``) where it gives one.
    Otherwise only the rounded reference tells: the largest finite value puts the truth at
    most one step below the threshold, so an inf there is accepted where the tolerance spans
    a step (fp16's rtol 1e-3 spans its 32); an inf says only that the truth is at or past the
    threshold, not how far, so the largest finite value against it is not accepted (a kernel
    that saturates, as a satfinite conversion does, would pass wherever the reference
    overflows, whatever the product)."""
    # A scalar False that broadcasts: the common all-finite output costs no mask of its size.
    nothing = torch.zeros((), dtype=torch.bool, device=a.device)
    if not dtype.is_floating_point or bool(both_finite.all()):
        return nothing  # complex values have no largest finite neighbour of inf to mistake
    largest = torch.finfo(dtype).max
    step = largest - float(torch.nextafter(torch.tensor(largest, dtype=dtype),
                                           torch.tensor(0.0, dtype=dtype)))
    same_sign = torch.sign(a) == torch.sign(e)
    candidate_overflows = torch.isinf(a) & (e.abs() == largest) & same_sign
    if unrounded is None:
        # The truth is at least largest - step / 2, one step below the threshold.
        if tolerance.atol + tolerance.rtol * (largest - step / 2) < step:
            return nothing
        return candidate_overflows
    truth = unrounded.to(device=e.device, dtype=torch.float64)
    reference_overflows = (a.abs() == largest) & torch.isinf(e) & same_sign
    # Past the threshold by this much (negative: short of it); largest is subtracted first,
    # so float64's own threshold, past its largest value, is never formed.
    past_threshold = truth.abs() - largest - step / 2
    near = (past_threshold.abs() <= tolerance.atol + tolerance.rtol * truth.abs()) \
        & (torch.sign(truth) == torch.sign(e))
    return (candidate_overflows | reference_overflows) & near


def _first_index(mask: torch.Tensor, shape: torch.Size) -> tuple[int, ...]:
    flat = int(mask.reshape(-1).nonzero()[0].item())
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return tuple(reversed(index))
