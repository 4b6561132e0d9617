"""Negative controls for every operator: zeros, the input, and uninitialised memory are
rejected. Each control launches the operator's own reference kernel first, so the Triton-launch
rule cannot be what rejects it: the value checks must."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

SPECS = load_registry().operators(["aten"])

_COMMON = '''

_kgb_reference_kernel = kernel


def _kgb_outputs(value):
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for v in value for t in _kgb_outputs(v)]
'''

CONTROLS = {
    "zeros": _COMMON + '''

@triton.jit
def _kgb_zero_fill(ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offsets, tl.zeros((BLOCK,), dtype=ptr.dtype.element_ty), mask=offsets < n)


def kernel(*args):
    out = _kgb_reference_kernel(*args)
    for tensor in _kgb_outputs(out):
        flat = tensor.contiguous()
        _kgb_zero_fill[(triton.cdiv(max(flat.numel(), 1), 1024),)](flat, flat.numel(), BLOCK=1024)
        tensor.copy_(flat)
    return out
''',
    "input": _COMMON + '''

def kernel(*args):
    _kgb_reference_kernel(*args)
    return next(arg for arg in args if isinstance(arg, torch.Tensor))
''',
    "empty_like": _COMMON + '''

def kernel(*args):
    out = _kgb_reference_kernel(*args)
    if isinstance(out, torch.Tensor):
        return torch.empty_like(out)
    return type(out)(torch.empty_like(t) for t in out)
''',
}


# Controls that are right by definition for some operators, with the reason; every other
# control still runs on them.
# The right answer is all zeros, so the zeros control is the right kernel.
ZEROS_ARE_RIGHT = frozenset({"aten.zeros", "aten.zeros_like", "aten.zero_"})
# No tensor argument exists to return (only sizes, values, a dtype and a device).
NO_TENSOR_ARGUMENT = frozenset({"aten.zeros", "aten.full", "aten.arange", "aten.scalar_tensor"})


def _skip_reason(spec, control):
    if control == "zeros" and spec.id in ZEROS_ARE_RIGHT:
        return "the right output is all zeros"
    if control == "input" and spec.id in NO_TENSOR_ARGUMENT:
        return "the operator takes no tensor argument"
    if control == "input" and 0 in spec.mutated_args:
        return "an in-place op returns its first argument, written in place: returning it " \
               "after the reference kernel ran is the right answer"
    return None


@pytest.mark.parametrize("control", sorted(CONTROLS))
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_negative_control_is_rejected(cpu_evaluator, spec, control):
    reason = _skip_reason(spec, control)
    if reason:
        pytest.skip(reason)
    source = spec.reference_kernel() + CONTROLS[control]
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict != verdicts.PASS, f"{control} control passed {spec.id}"
    checked = [c for c in result.cases if c["status"] != "skipped"]
    assert checked, "the control must have been run on at least one case"
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.WRONG_SHAPE_OR_DTYPE,
                              verdicts.OUTPUT_ALIASES_INPUT, verdicts.STALE_OUTPUT,
                              verdicts.HELDOUT_FAILED, verdicts.INPUT_MUTATED), \
        f"{control}: {result.verdict}: {result.message}"
