"""The published KernelGenBench vLLM set: 50 operators of vLLM 0.13 (namespace ``vllm13::``,
``VLLM_OPERATOR_NAMES`` in flagos-ai/KernelGenBench; shared/inventory/kernelgenbench-facts.md,
section 1b), and which kgb specs cover each.

kgb checks the op vLLM's Python wrapper calls, under the op's own name and with its
out-parameters, rather than the wrapper that allocates them: ``scaled_fp8_quant(input, scale)``
is three ops in vLLM (static, dynamic per-tensor, dynamic per-token), each a kgb spec. A
published name maps to the spec(s) that check its semantics; a name no spec covers maps to an
empty tuple and has its reason in ``LEFT_OUT``.
"""

from __future__ import annotations

# Tag of the specs that cover a published operator (as the cublas source tags its 50).
PUBLISHED_TAG = "published"

PUBLISHED_VLLM: tuple[str, ...] = (
    # attention
    "paged_attention_v1", "paged_attention_v2", "merge_attn_states",
    "convert_vertical_slash_indexes",
    # kv cache
    "reshape_and_cache", "reshape_and_cache_flash", "concat_and_cache_mla", "copy_blocks",
    "copy_blocks_mla", "swap_blocks", "cp_gather_cache", "cp_gather_indexer_k_quant_cache",
    "gather_and_maybe_dequant_cache", "convert_fp8",
    # norms and positional
    "rms_norm", "fused_add_rms_norm", "rms_norm_dynamic_per_token_quant",
    "rms_norm_per_block_quant", "fused_qk_norm_rope", "rotary_embedding",
    # quantisation, quantised GEMM, weight repacking
    "allspark_w8a16_gemm", "awq_gemm", "awq_marlin_moe_repack", "cutlass_pack_scale_fp8",
    "cutlass_scaled_mm", "cutlass_scaled_mm_azp", "ggml_dequantize", "ggml_moe_a8",
    "ggml_moe_a8_vec", "ggml_mul_mat_a8", "ggml_mul_mat_vec_a8", "gptq_gemm",
    "gptq_marlin_24_gemm", "gptq_marlin_gemm", "gptq_marlin_moe_repack", "gptq_shuffle",
    "marlin_int4_fp8_preprocess", "scaled_fp8_quant", "scaled_int8_quant",
    "hadacore_transform",
    # MoE routing
    "batched_moe_align_block_size", "moe_align_block_size", "moe_lora_align_block_size",
    "moe_sum", "grouped_topk", "topk_softmax", "shuffle_rows",
    # other
    "apply_repetition_penalties_cuda", "permute_cols", "selective_scan_fwd",
)

# Published name -> the kgb spec names that check it. Most are the same name; the exceptions
# are wrappers that dispatch to several underlying ops, or a `_cuda` suffix kgb drops.
_RENAMED: dict[str, tuple[str, ...]] = {
    "scaled_fp8_quant": ("static_scaled_fp8_quant", "dynamic_scaled_fp8_quant",
                         "dynamic_per_token_scaled_fp8_quant"),
    "scaled_int8_quant": ("static_scaled_int8_quant", "dynamic_scaled_int8_quant"),
    "apply_repetition_penalties_cuda": ("apply_repetition_penalties",),
}

# Published names kgb does not check, and why (kept in code so the docs and a test agree).
LEFT_OUT: dict[str, str] = {
    "allspark_w8a16_gemm": (
        "its weights are in AllSpark's n32k16 reordered layout (rearrange_kn_weight_as_n32k16_"
        "order), defined only by its CUDA source, and its output depends on sm_count/"
        "sm_version/CUBLAS_M_THRESHOLD dispatch arguments; not specifiable from public facts "
        "alone"),
    "awq_marlin_moe_repack": (
        "writes Marlin's tile-interleaved weight layout, defined only by the Marlin kernels' "
        "thread/tile mapping: no layout-independent statement of the result exists"),
    "gptq_marlin_moe_repack": (
        "writes Marlin's tile-interleaved weight layout (as awq_marlin_moe_repack)"),
    "gptq_marlin_gemm": (
        "reads weights, scales and zero points in Marlin's repacked layouts (see "
        "gptq_marlin_moe_repack) plus a workspace protocol; gptq_gemm and awq_gemm check the "
        "same int4 GEMM on the plain GPTQ/AWQ layouts"),
    "gptq_marlin_24_gemm": (
        "Marlin's 2:4-sparse format (compressed weights plus Marlin-ordered metadata), "
        "defined only by its CUDA source"),
    "marlin_int4_fp8_preprocess": (
        "rewrites int4 weights already in Marlin's layout for Marlin's fp8-activation path: "
        "its input and output formats are Marlin's"),
    "cutlass_pack_scale_fp8": (
        "packs fp8 group scales into the layout CUTLASS's w4a8 mixed-input GEMM reads "
        "(cutlass::...::compute_memory_reordering_atom), defined by CUTLASS internals"),
    "ggml_moe_a8": (
        "reads sorted_token_ids/expert_ids aligned (by moe_align_block_size) to vLLM's "
        "compile-time MoE tile MOE_X (4 on CUDA, 8 on ROCm), so its input contract depends on "
        "the platform's tile size; its arithmetic is ggml_mul_mat_a8's and its routing "
        "ggml_moe_a8_vec's, both checked"),
}


def covering_specs(name: str) -> tuple[str, ...]:
    """The kgb spec names that check the published operator ``name`` (empty: left out)."""
    if name in LEFT_OUT:
        return ()
    return _RENAMED.get(name, (name,))


PUBLISHED_TO_KGB: dict[str, tuple[str, ...]] = {name: covering_specs(name)
                                                 for name in PUBLISHED_VLLM}

# The spec names that carry the published tag.
PUBLISHED_SPECS: frozenset[str] = frozenset(spec for specs in PUBLISHED_TO_KGB.values()
                                            for spec in specs)
