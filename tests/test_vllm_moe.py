"""The vllm MoE-routing, sampling and Mamba operators: each shipped kernel passes, and
plausible-but-wrong kernels made from it by one targeted edit are rejected (wrong tie rule,
missed renormalisation, padding not to a block multiple, penalty of the wrong sign, a
forgotten in-place state update, a written input), as are zero-filled and untouched
outputs."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

OPS = ("topk_softmax", "moe_align_block_size", "batched_moe_align_block_size", "moe_sum",
       "shuffle_rows", "permute_cols", "grouped_topk", "apply_repetition_penalties",
       "causal_conv1d_update", "selective_state_update")
SPECS = {spec.name: spec for spec in load_registry().operators(["vllm"]) if spec.name in OPS}

REJECTED = (verdicts.WRONG_OUTPUT, verdicts.WRONG_SHAPE_OR_DTYPE, verdicts.HELDOUT_FAILED,
            verdicts.STALE_OUTPUT, verdicts.INPUT_MUTATED, verdicts.OUTPUT_ALIASES_INPUT)


def _mutant(name: str, old: str, new: str) -> str:
    text = SPECS[name].reference_kernel()
    assert text.count(old) == 1, f"{name}: the edit's target must occur once"
    return text.replace(old, new)


def test_all_ops_registered():
    assert set(SPECS) == set(OPS)


MUTANTS = {
    # Ties broken towards the higher expert index instead of the lower.
    "topk_softmax_high_index_ties": (
        "topk_softmax", "tl.min(tl.where(probs == best, cols, BLOCK_E), axis=0)",
        "tl.max(tl.where(probs == best, cols, -1), axis=0)"),
    "topk_softmax_never_renormalizes": (
        "topk_softmax", "if RENORMALIZE:", "if False:"),
    # Segments not padded to a multiple of block_size.
    "moe_align_no_block_padding": (
        "moe_align_block_size",
        "padded = (counts + block_size - 1) // block_size * block_size", "padded = counts"),
    # Padding filled with 0 (a real token id) instead of the sentinel numel.
    "moe_align_zero_sentinel": (
        "moe_align_block_size", "sorted_token_ids, sorted_token_ids.numel(), numel,",
        "sorted_token_ids, sorted_token_ids.numel(), 0,"),
    "batched_align_no_minus_one": (
        "batched_moe_align_block_size", "expert_ids, expert_ids.numel(), -1,",
        "expert_ids, expert_ids.numel(), 0,"),
    # Negative logits divided, positive multiplied: the penalty's sign rule reversed.
    "repetition_penalty_wrong_sign": (
        "apply_repetition_penalties", "tl.where(x > 0, x / p, x * p)",
        "tl.where(x > 0, x * p, x / p)"),
    "repetition_penalty_prompt_only": (
        "apply_repetition_penalties",
        "(tl.load(output_ptr + offs, mask=mask, other=0) != 0)",
        "(tl.load(output_ptr + offs, mask=mask, other=0) != 0) & False"),
    # The conv state is never rolled forward.
    "conv1d_update_forgets_state": (
        "causal_conv1d_update",
        "tl.store(state_base[:, None] + (ts * stride_state_tok)[None, :], vals, mask=m2)",
        "pass"),
    "conv1d_update_no_silu": (
        "causal_conv1d_update", "acc = acc * tl.sigmoid(acc)", "acc = acc"),
    "ssu_forgets_state": (
        "selective_state_update",
        "tl.store(state_ptr + dst * heads * head_dim * dstate + tile,\n"
        "                 s.to(state_ptr.dtype.element_ty), mask=m2)", "pass"),
    "ssu_no_softplus": (
        "selective_state_update", "if SOFTPLUS:", "if False:"),
    # Writes its partial sums into input, which moe_sum must leave alone.
    "moe_sum_writes_input": (
        "moe_sum",
        "    tl.store(out_ptr + token * hidden + cols, acc.to(out_ptr.dtype.element_ty), "
        "mask=mask)",
        "    tl.store(out_ptr + token * hidden + cols, acc.to(out_ptr.dtype.element_ty), "
        "mask=mask)\n    tl.store(in_ptr + token * topk * hidden + cols, "
        "acc.to(in_ptr.dtype.element_ty), mask=mask)"),
    "grouped_topk_biased_weights": (
        "grouped_topk", "weight = tl.sum(tl.where(cols == winner, s, 0.0), axis=0)",
        "weight = tl.sum(tl.where(cols == winner, b, 0.0), axis=0)"),
    "grouped_topk_ignores_groups": (
        "grouped_topk", "cand = tl.where(keep & valid, b, -float(\"inf\"))",
        "cand = tl.where(valid, b, -float(\"inf\"))"),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_wrong_kernel_is_rejected(cpu_evaluator, mutant):
    name, old, new = MUTANTS[mutant]
    result = cpu_evaluator.evaluate(f"vllm.{name}", _mutant(name, old, new))
    assert result.verdict in REJECTED, f"{mutant}: {result.verdict}: {result.message}"
    if mutant == "moe_sum_writes_input":
        assert result.verdict == verdicts.INPUT_MUTATED


# Negative controls, written for out-parameter ops: the reference kernel runs (so a Triton
# launch happens), then every output it wrote -- returned tensors and the arguments in
# mutated_args -- is zero-filled, or put back as it was before the call.
_CONTROL_COMMON = '''

_kgb_reference_kernel = kernel
_KGB_MUTATED = __MUTATED__


def _kgb_outputs(value):
    if value is None:
        return []
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for v in value for t in _kgb_outputs(v)]


@triton.jit
def _kgb_zero_fill(ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offsets, tl.zeros((BLOCK,), dtype=ptr.dtype.element_ty), mask=offsets < n)


def _kgb_zero(tensor):
    flat = tensor.contiguous()
    if flat.dtype == torch.bool:
        flat = flat.view(torch.uint8)
    _kgb_zero_fill[(triton.cdiv(max(flat.numel(), 1), 1024),)](flat, flat.numel(), BLOCK=1024)
    tensor.copy_(flat.view(tensor.dtype) if flat.dtype != tensor.dtype else flat)
'''

CONTROLS = {
    "zeros": _CONTROL_COMMON + '''

def kernel(*args):
    out = _kgb_reference_kernel(*args)
    for tensor in _kgb_outputs(out) + [args[i] for i in _KGB_MUTATED]:
        _kgb_zero(tensor)
    return out
''',
    "untouched": _CONTROL_COMMON + '''

def kernel(*args):
    saved = [args[i].clone() for i in _KGB_MUTATED]
    out = _kgb_reference_kernel(*args)
    for i, before in zip(_KGB_MUTATED, saved):
        args[i].copy_(before)
    if isinstance(out, torch.Tensor):
        return torch.empty_like(out)
    if out is not None:
        return type(out)(torch.empty_like(t) for t in out)
    return out
''',
}


@pytest.mark.parametrize("control", sorted(CONTROLS))
@pytest.mark.parametrize("name", OPS)
def test_negative_control_is_rejected(unscreened_cpu_evaluator, name, control):
    spec = SPECS[name]
    source = spec.reference_kernel() + CONTROLS[control].replace(
        "__MUTATED__", repr(tuple(spec.mutated_args)))
    result = unscreened_cpu_evaluator.evaluate(spec.id, source)  # the value checks, tested
    assert result.verdict in REJECTED, f"{control}: {result.verdict}: {result.message}"
