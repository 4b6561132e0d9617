"""The vllm operators added to cover the published KernelGenBench vLLM set: each shipped kernel
passes on the interpreter, zero-filled and untouched outputs fail, and a plausible-but-wrong
kernel made from the shipped one by one targeted edit is rejected for each op family."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

OPS = ("rms_norm_per_block_quant", "fused_qk_norm_rope", "moe_lora_align_block_size",
       "convert_vertical_slash_indexes")
SPECS = {spec.name: spec for spec in load_registry().operators(["vllm"]) if spec.name in OPS}

REJECTED = (verdicts.WRONG_OUTPUT, verdicts.WRONG_SHAPE_OR_DTYPE, verdicts.HELDOUT_FAILED,
            verdicts.STALE_OUTPUT, verdicts.INPUT_MUTATED, verdicts.OUTPUT_ALIASES_INPUT)


def _mutant(name: str, old: str, new: str) -> str:
    text = SPECS[name].reference_kernel()
    assert text.count(old) == 1, f"{name}: the edit's target must occur once: {old!r}"
    return text.replace(old, new)


def test_all_ops_registered_and_published():
    assert set(SPECS) == set(OPS)
    assert all("published" in spec.tags for spec in SPECS.values())


@pytest.mark.parametrize("name", OPS)
def test_reference_kernel_passes(cpu_evaluator, name):
    result = cpu_evaluator.evaluate(f"vllm.{name}", SPECS[name].reference_kernel())
    assert result.verdict == verdicts.PASS, result.message


_ZEROS = '''

_kgb_reference_kernel = kernel


def kernel(*args):
    result = _kgb_reference_kernel(*args)
    for index in __MUTATED__:
        if isinstance(args[index], torch.Tensor):
            args[index].zero_()
    if isinstance(result, torch.Tensor):
        result = torch.zeros_like(result)
    return result
'''
_UNTOUCHED = '''

@triton.jit
def _kgb_nothing(ptr):
    pass


def kernel(*args):
    _kgb_nothing[(1,)](next(a for a in args if isinstance(a, torch.Tensor)))
    return None
'''


@pytest.mark.parametrize("control", ["zeros", "untouched"])
@pytest.mark.parametrize("name", OPS)
def test_negative_controls_are_rejected(cpu_evaluator, name, control):
    spec = SPECS[name]
    if control == "zeros":
        source = spec.reference_kernel() + _ZEROS.replace("__MUTATED__",
                                                          repr(tuple(spec.mutated_args)))
    else:
        source = spec.reference_kernel() + _UNTOUCHED
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict in REJECTED, f"{control} on {name}: {result.verdict}: {result.message}"


MUTANTS = {
    # Scales written row-major whatever their layout: wrong for the transposed scales case.
    "per_block_ignores_scale_layout": (
        "rms_norm_per_block_quant", "scales.stride(0), scales.stride(1)",
        "scales.shape[1], 1"),
    # The residual sum is used but never written back in place.
    "per_block_forgets_residual": (
        "rms_norm_per_block_quant",
        "            tl.store(r_row + idx, x.to(res_ptr.dtype.element_ty))\n", ""),
    # scale_ub ignored: the group maxima are not clamped.
    "per_block_ignores_scale_ub": (
        "rms_norm_per_block_quant", "        if HAS_UB:\n", "        if False:\n"),
    # k heads normalised with q_weight.
    "qk_norm_rope_one_weight": (
        "fused_qk_norm_rope", "w = tl.load(kw_ptr + d).to(tl.float32)",
        "w = tl.load(qw_ptr + d).to(tl.float32)"),
    # v heads normalised and rotated too: they must be left as they were.
    "qk_norm_rope_touches_v": (
        "fused_qk_norm_rope", "_qk_norm_rope_kernel[(tokens, num_heads_q + num_heads_k)](",
        "_qk_norm_rope_kernel[(tokens, num_heads_q + num_heads_k + num_heads_v)]("),
    # The other rotation style.
    "qk_norm_rope_other_style": (
        "fused_qk_norm_rope", "IS_NEOX=bool(is_neox)", "IS_NEOX=not bool(is_neox)"),
    # Disabled adapters processed anyway: their rows must stay as they were.
    "lora_align_ignores_adapter_enabled": (
        "moe_lora_align_block_size", "return lora, (lora >= 0) & (enabled != 0)",
        "return lora, lora >= 0"),
    # Every slot counted for every adapter (the token-to-LoRA mapping ignored).
    "lora_align_ignores_mapping": (
        "moe_lora_align_block_size",
        "            hit = ((ids == expert) & (owner == lora)).to(tl.int32)",
        "            hit = (ids == expert).to(tl.int32)"),
    # Unused blocks filled with expert 0 instead of -1.
    "lora_align_zero_filler": (
        "moe_lora_align_block_size", "tl.full([BLOCK], -1, tl.int32)",
        "tl.full([BLOCK], 0, tl.int32)"),
    # Non-causal: the last vertical, pending when the verticals run out, never recorded.
    "vertical_slash_drops_last_vertical": (
        "convert_vertical_slash_indexes", "if (v == nnz_v) & (v_idx < kv_len):",
        "if (v == nnz_v) & (v_idx < 0):"),
    # Every vertical recorded as a column, also those inside a block range already visited.
    "vertical_slash_columns_inside_ranges": (
        "convert_vertical_slash_indexes", "if v_idx < range_start:", "if v_idx < range_end:"),
}


def test_vertical_slash_cases_stay_inside_their_buffers():
    """vLLM writes block_offset without a bound: a case with more blocks than NNZ_S would have
    it write into the next row. The reference raises there; no case (over seeds) does."""
    from kgb_core.operators import SMALL, InputContext

    spec = SPECS["convert_vertical_slash_indexes"]
    for case in spec.cases_in([SMALL]):
        for seed in range(6):
            spec.reference(*spec.make_inputs(InputContext(case, "int32", seed, "cpu")))


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_plausible_wrong_kernel_is_rejected(cpu_evaluator, mutant):
    name, old, new = MUTANTS[mutant]
    result = cpu_evaluator.evaluate(f"vllm.{name}", _mutant(name, old, new))
    assert result.verdict in REJECTED, f"{mutant}: {result.verdict}: {result.message}"
