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

def _kgb_tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _kgb_tensors(v)]
    return []


def _kgb_copy(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_kgb_copy(v) for v in value)
    return value


def kernel(*args):
    # The reference kernel runs on copies, so an in-place op's argument comes back unwritten
    # (returning the argument it wrote would be right). The first input tensor, also from
    # inside a list (cat, stack), is returned.
    _kgb_reference_kernel(*_kgb_copy(args))
    return _kgb_tensors(args)[0]
''',
    "empty_like": _COMMON + '''

def kernel(*args):
    out = _kgb_reference_kernel(*args)
    if isinstance(out, torch.Tensor):
        return torch.empty_like(out)
    return type(out)(torch.empty_like(t) for t in out)
''',
}


@pytest.mark.parametrize("control", sorted(CONTROLS))
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_negative_control_is_rejected(cpu_evaluator, spec, control):
    source = spec.reference_kernel() + CONTROLS[control]
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict != verdicts.PASS, f"{control} control passed {spec.id}"
    checked = [c for c in result.cases if c["status"] != "skipped"]
    assert checked, "the control must have been run on at least one case"
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.WRONG_SHAPE_OR_DTYPE,
                              verdicts.OUTPUT_ALIASES_INPUT, verdicts.STALE_OUTPUT,
                              verdicts.HELDOUT_FAILED, verdicts.INPUT_MUTATED), \
        f"{control}: {result.verdict}: {result.message}"
