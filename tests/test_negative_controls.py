"""Negative controls for every operator of every source: zeros, the input, and uninitialised
memory are rejected. Each control launches the operator's own reference kernel first, so the
Triton-launch rule cannot be what rejects it: the value checks must.

An operator's results are its return value and the arguments it writes (``mutated_args``,
vLLM's out-parameters and in-place updates): each control spoils all of them.
"""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

SPECS = load_registry().operators()
CPU_SKIPPED = load_registry().backend("cpu").quirks.skipped_dtypes

_COMMON = '''

_kgb_reference_kernel = kernel


def _kgb_tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _kgb_tensors(v)]
    return []


def _kgb_results(out, args):
    """The returned tensors and the written arguments, once each."""
    seen, results = set(), []
    for tensor in _kgb_tensors(out) + [t for i in _KGB_WRITTEN for t in _kgb_tensors(args[i])]:
        if id(tensor) not in seen:
            seen.add(id(tensor))
            results.append(tensor)
    return results
'''

CONTROLS = {
    "zeros": _COMMON + '''

@triton.jit
def _kgb_zero_fill(ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offsets, tl.zeros((BLOCK,), dtype=ptr.dtype.element_ty), mask=offsets < n)


def kernel(*args):
    out = _kgb_reference_kernel(*args)
    for tensor in _kgb_results(out, args):
        flat = tensor.contiguous()
        _kgb_zero_fill[(triton.cdiv(max(flat.numel(), 1), 1024),)](flat, flat.numel(), BLOCK=1024)
        tensor.copy_(flat)
    return out
''',
    "input": _COMMON + '''

def _kgb_copy(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_kgb_copy(v) for v in value)
    return value


def kernel(*args):
    # The first input tensor comes back, also from inside a list (cat, stack); written
    # arguments keep the values they came with, since the reference kernel runs on copies.
    out = _kgb_reference_kernel(*_kgb_copy(args))
    if out is None:
        return None
    return _kgb_tensors(args)[0]
''',
    "empty_like": _COMMON + '''

def kernel(*args):
    out = _kgb_reference_kernel(*args)
    for i in _KGB_WRITTEN:
        for tensor in _kgb_tensors(args[i]):
            tensor.copy_(torch.empty_like(tensor))
    if isinstance(out, torch.Tensor):
        return torch.empty_like(out)
    if out is None:
        return None
    return type(out)(torch.empty_like(t) for t in out)
''',
}


def control_source(spec, control: str) -> str:
    return (spec.reference_kernel() + f"\n\n_KGB_WRITTEN = {tuple(spec.mutated_args)!r}\n"
            + CONTROLS[control])


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
    if all(dtype in CPU_SKIPPED for dtype in spec.dtypes):
        return "the CPU backend skips every dtype of this operator"
    return None


@pytest.mark.parametrize("control", sorted(CONTROLS))
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_negative_control_is_rejected(unscreened_cpu_evaluator, spec, control):
    reason = _skip_reason(spec, control)
    if reason:
        pytest.skip(reason)
    # The controls' own scaffolding (id, type) is no candidate's: the value checks are tested.
    result = unscreened_cpu_evaluator.evaluate(spec.id, control_source(spec, control))
    assert result.verdict != verdicts.PASS, f"{control} control passed {spec.id}"
    checked = [c for c in result.cases if c["status"] != "skipped"]
    assert checked, "the control must have been run on at least one case"
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.WRONG_SHAPE_OR_DTYPE,
                              verdicts.OUTPUT_ALIASES_INPUT, verdicts.STALE_OUTPUT,
                              verdicts.HELDOUT_FAILED, verdicts.INPUT_MUTATED), \
        f"{control}: {result.verdict}: {result.message}"
