"""Comparing a candidate's output with the reference's, structure first, then values.

Runs inside the worker (imports torch). The rule is assert_close's: the dtype must match
exactly, then ``|actual - expected| <= atol + rtol * |expected|`` elementwise; NaN or Inf in
the output where the reference is finite fails, whatever the tolerance, with one exception at
the edge of the dtype's range (``_overflow_edge``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kgb_core.evaluation import verdicts
from kgb_core.operators import Tolerance, WithTolerance


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
    return type(value).__name__


def compare_outputs(actual: Any, expected: Any, tolerance: Tolerance, where: str = "output") -> Comparison:
    if isinstance(expected, WithTolerance):
        if isinstance(actual, WithTolerance):
            actual = actual.value
        return compare_outputs(actual, expected.value, expected.tolerance, where)
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


def _compare_tensors(actual: Any, expected: torch.Tensor, tolerance: Tolerance, where: str) -> Comparison:
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
    e = expected.to(wide)
    expected_finite = torch.isfinite(e)
    edge = _overflow_edge(a, e, expected.dtype, tolerance)
    bad_nonfinite = ~torch.isfinite(a) & expected_finite & ~edge
    # Non-finite reference values must be matched exactly (same inf sign, NaN where NaN).
    nonfinite_mismatch = ~expected_finite & ~((a == e) | (torch.isnan(a) & torch.isnan(e)) | edge)
    diff = torch.where(expected_finite & torch.isfinite(a), (a - e).abs(), 0.0)
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
    allowed = tolerance.atol + tolerance.rtol * e.abs()
    outside = (diff > allowed) & expected_finite
    if bool(outside.any()):
        count = int(outside.sum().item())
        index = _first_index(outside, expected.shape)
        result.verdict = verdicts.WRONG_OUTPUT
        result.message = (f"{where}: {count} of {expected.numel()} elements outside rtol="
                          f"{tolerance.rtol:g} atol={tolerance.atol:g}; max abs error "
                          f"{result.max_abs_error:.3g}; first at {index}: got "
                          f"{actual[index].item():.6g}, expected {expected[index].item():.6g}")
    return result


def _overflow_edge(a: torch.Tensor, e: torch.Tensor, dtype: torch.dtype,
                   tolerance: Tolerance) -> torch.Tensor:
    """Where one side is the dtype's largest finite value and the other the infinity of the
    same sign: the two are neighbours, a value just past the largest finite one rounds to
    either, and two correct computations (an fp32 running product against a float64 one)
    can land on both sides. Accepted only where the tolerance admits one rounding step there
    (fp16's rtol 1e-3 covers its 32 at 65504); an inf where the reference is any other value
    still fails (measured on an H200: cumprod of 32768 fp16 factors, reference -65504, a
    correct fp32-accumulating kernel -inf)."""
    nothing = torch.zeros_like(a, dtype=torch.bool)
    if not dtype.is_floating_point or bool(torch.isfinite(a).all() & torch.isfinite(e).all()):
        return nothing  # complex values have no largest finite neighbour of inf to mistake
    largest = torch.finfo(dtype).max
    step = largest - float(torch.nextafter(torch.tensor(largest, dtype=dtype),
                                           torch.tensor(0.0, dtype=dtype)))
    if tolerance.atol + tolerance.rtol * largest < step:
        return nothing
    return (((a.abs() == largest) & torch.isinf(e)) | ((e.abs() == largest) & torch.isinf(a))) \
        & (torch.sign(a) == torch.sign(e))


def _first_index(mask: torch.Tensor, shape: torch.Size) -> tuple[int, ...]:
    flat = int(mask.reshape(-1).nonzero()[0].item())
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return tuple(reversed(index))
