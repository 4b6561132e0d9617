"""The vllm operators added to cover the published KernelGenBench vLLM set: each shipped kernel
passes on the interpreter, zero-filled and untouched outputs fail, and a plausible-but-wrong
kernel made from the shipped one by one targeted edit is rejected for each op family."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

OPS = ("rms_norm_per_block_quant", "fused_qk_norm_rope", "moe_lora_align_block_size",
       "convert_vertical_slash_indexes", "cutlass_scaled_mm", "cutlass_scaled_mm_azp",
       "hadacore_transform", "gptq_gemm", "gptq_shuffle", "awq_gemm", "ggml_dequantize",
       "ggml_mul_mat_vec_a8", "ggml_mul_mat_a8", "ggml_moe_a8_vec")
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
    # Per-channel weight scales read as one per-tensor scale.
    "scaled_mm_ignores_per_channel": (
        "cutlass_scaled_mm", "PER_CHANNEL=scale_b.numel() > 1", "PER_CHANNEL=False"),
    # The bias dropped.
    "scaled_mm_drops_bias": ("cutlass_scaled_mm", "HAS_BIAS=bias is not None",
                             "HAS_BIAS=False"),
    # A per-token zero point applied as if azp_adj already held it (the per-tensor rule).
    "azp_per_token_as_per_tensor": (
        "cutlass_scaled_mm_azp", "PER_TOKEN_AZP=azp is not None", "PER_TOKEN_AZP=False"),
    # The unnormalised transform (entries +-1 instead of +-1/sqrt(n)).
    "hadamard_unnormalised": ("hadacore_transform", "rows, 1.0 / n ** 0.5", "rows, 1.0"),
    # inplace=True not honoured: the result is returned but x keeps its old values.
    "hadamard_ignores_inplace": ("hadacore_transform", "    if inplace:\n",
                                 "    if False:\n"),
    # GPTQ v1's stored zero - 1 read as the zero itself.
    "gptq_gemm_v1_zero_offset_forgotten": (
        "gptq_gemm", "ZERO_OFFSET=0 if use_v2_format else 1", "ZERO_OFFSET=0"),
    # act-order's q_perm ignored: only the nibbles are permuted.
    "gptq_shuffle_ignores_perm": ("gptq_shuffle", "HAS_PERM=q_perm.numel() > 0",
                                  "HAS_PERM=False"),
    # Nibbles left in row order (no exllama permutation).
    "gptq_shuffle_plain_nibbles": ("gptq_shuffle", "slot = (r % 2) * 4 + r // 2",
                                   "slot = r"),
    # AWQ words read in plain nibble order instead of AWQ's interleaved one.
    "awq_plain_nibble_order": ("awq_gemm", "shift = ((j % 2) * 4 + j // 2) * 4",
                               "shift = j * 4"),
    # GGML nibbles read interleaved (value 2i low, 2i + 1 high) instead of low half first.
    "ggml_interleaved_nibbles": ("ggml_dequantize",
                                 "q = tl.where(j < 16, byte & 0xF, byte >> 4)",
                                 "q = tl.where(j % 2 == 0, byte & 0xF, byte >> 4)"),
    # Activations not quantised to q8_1 (x / d kept unrounded): more accurate than vLLM, and
    # not what vLLM computes.
    "ggml_vec_skips_q8_1_rounding": (
        "ggml_mul_mat_vec_a8",
        "_round_half_away(tl.math.div_rn(x, tl.where(amax == 0, 1.0, d)))",
        "(tl.math.div_rn(x, tl.where(amax == 0, 1.0, d)))"),
    # The GEMV's Q5_0 rule (with the block sum) on the tiled GEMM path, which has none.
    "ggml_mm_uses_the_gemv_q5_0_rule": ("ggml_mul_mat_a8", "mmq=True)\n", "mmq=False)\n"),
    # Every slot of a token routed to the token's first expert.
    "ggml_moe_vec_first_expert_only": (
        "ggml_moe_a8_vec",
        "w_base = w_ptr + tl.load(ids_ptr + o).to(tl.int64) * expert_stride",
        "w_base = w_ptr + tl.load(ids_ptr + (o // top_k) * top_k).to(tl.int64) * expert_stride"),
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


def test_hadamard_reference_is_the_normalised_sylvester_matrix():
    import torch

    spec = SPECS["hadacore_transform"]
    h = torch.ones(1, 1)
    while h.shape[0] < 16:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    x = torch.randn(3, 16, generator=torch.Generator().manual_seed(0))
    got = spec.reference(x.clone(), False).float()
    assert torch.allclose(got, x @ h / 4.0, atol=1e-6)


def test_packed_formats_round_trip_through_the_references():
    """The GPTQ and AWQ packers the inputs use agree with the unpackers the references use,
    and AWQ's interleaved order differs from the plain one."""
    import torch

    from kgb_sources.vllm import wquant

    values = torch.randint(0, 16, (16, 24), generator=torch.Generator().manual_seed(1))
    assert torch.equal(wquant._unpack_rows(wquant._pack_along_rows(values, 4), 4), values)
    awq = wquant._pack_along_cols(values, 4, wquant.AWQ_ORDER)
    assert torch.equal(wquant._unpack_cols(awq, 4, wquant.AWQ_ORDER), values)
    assert not torch.equal(wquant._unpack_cols(awq, 4), values)
