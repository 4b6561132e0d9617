"""Attention ops of vLLM 0.13: paged decode attention (``paged_attention_v1``, and
``paged_attention_v2`` with its split-KV scratch buffers) and ``merge_attn_states``.

Facts they rest on (vLLM 0.13, csrc/attention/attention_kernels.cuh, paged_attention_v1.cu,
paged_attention_v2.cu, merge_attn_states.cu, vllm/_custom_ops.py, tests/kernels/attention/):
- query [num_seqs, num_heads, head_size] (one decode token a sequence), key_cache
  [num_blocks, num_kv_heads, head_size/x, block_size, x], value_cache [num_blocks,
  num_kv_heads, head_size, block_size]; q head h reads kv head h // (num_heads // num_kv_heads);
- logits = scale * q.k in fp32 (+ alibi_slope[h] * (pos - seq_len + 1)); softmax in fp32 with
  the max subtracted; probabilities divided by (sum + 1e-6), rounded to the activation dtype,
  then multiplied with V in fp32; the output is rounded to the query's dtype;
- v2 splits each sequence into partitions of 512 tokens: exp_sums and max_logits [num_seqs,
  num_heads, max_num_partitions] (fp32) and tmp_out [num_seqs, num_heads, max_num_partitions,
  head_size] are scratch, and the result equals v1's up to rounding;
- merge_attn_states: lse tensors are [num_heads, num_tokens] fp32; an lse of +inf or -inf is
  taken as -inf; where both are -inf the output is prefix_output and output_lse is -inf.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.vllm._build import vllm_op

PARTITION_SIZE = 512  # vLLM's paged_attention_v2 partition (csrc/attention/paged_attention_v2.cu)


def _alibi_slopes(num_heads: int) -> list[float]:
    """The ALiBi slopes of the paper for a power-of-two head count, 2^(-8 (i + 1) / n)."""
    return [2.0 ** (-8.0 * (i + 1) / num_heads) for i in range(num_heads)]


def _paged_inputs(ctx: InputContext, v2: bool) -> list[Any]:
    torch = ctx.torch
    p = ctx.params
    seq_lens = list(p["seq_lens"])
    seqs, heads, kv_heads = len(seq_lens), p["num_heads"], p["num_kv_heads"]
    size, block_size = p["head_size"], p["block_size"]
    x = 16 // torch.empty((), dtype=ctx.dtype).element_size()
    needed = [math.ceil(n / block_size) for n in seq_lens]
    width = max(needed)
    num_blocks = sum(needed) + 3
    # Distinct blocks per sequence; table entries past a sequence's need hold other valid ids,
    # which a kernel must not read as context.
    pool = torch.randperm(num_blocks, generator=ctx.generator)
    table = torch.randint(0, num_blocks, (seqs, width), generator=ctx.generator)
    used = 0
    for s, count in enumerate(needed):
        table[s, :count] = pool[used:used + count]
        used += count
    max_seq_len = max(seq_lens)
    query = ctx.randn(seqs, heads, size)
    key_cache = ctx.randn(num_blocks, kv_heads, size // x, block_size, x)
    value_cache = ctx.randn(num_blocks, kv_heads, size, block_size)
    out = ctx.randn(seqs, heads, size)
    alibi = (torch.tensor(_alibi_slopes(heads), dtype=torch.float32).to(ctx.device)
             if p.get("alibi") else None)
    scale = 1.0 / math.sqrt(size)
    one = torch.ones((), dtype=torch.float32).to(ctx.device)
    tail = [kv_heads, scale, table.to(torch.int32).to(ctx.device),
            torch.tensor(seq_lens, dtype=torch.int32).to(ctx.device), block_size, max_seq_len,
            alibi, "auto", one, one.clone(), 0, 0, 0, 64, 0]
    if not v2:
        return [out, query, key_cache, value_cache, *tail]
    partitions = math.ceil(max_seq_len / PARTITION_SIZE)
    exp_sums = ctx.randn(seqs, heads, partitions, dtype=torch.float32)
    max_logits = ctx.randn(seqs, heads, partitions, dtype=torch.float32)
    tmp_out = ctx.randn(seqs, heads, partitions, size)
    return [out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache, *tail]


def _paged_attention(out, query, key_cache, value_cache, num_kv_heads, scale,  # noqa: ANN001
                     block_tables, seq_lens, alibi_slopes) -> None:
    import torch

    _, kv_heads, size_x, block_size, x = key_cache.shape
    heads, size = query.shape[1], query.shape[2]
    group = heads // num_kv_heads
    for s in range(query.shape[0]):
        length = int(seq_lens[s])
        count = -(-length // block_size)
        blocks = block_tables[s, :count].long()
        # [count, kv_heads, size/x, block, x] -> [tokens, kv_heads, size]
        k = key_cache[blocks].permute(0, 3, 1, 2, 4).reshape(count * block_size, kv_heads, size)
        v = value_cache[blocks].permute(0, 3, 1, 2).reshape(count * block_size, kv_heads, size)
        k = k[:length].float().repeat_interleave(group, dim=1)
        v = v[:length].float().repeat_interleave(group, dim=1)
        logits = scale * torch.einsum("hd,thd->ht", query[s].float(), k)
        if alibi_slopes is not None:
            position = torch.arange(length, device=query.device, dtype=torch.float32)
            logits = logits + alibi_slopes[:, None].float() * (position - length + 1)
        logits = logits - logits.max(dim=1, keepdim=True).values
        weights = logits.exp()
        probs = weights / (weights.sum(dim=1, keepdim=True) + 1e-6)
        # vLLM rounds the probabilities to the cache dtype before the product with V.
        probs = probs.to(query.dtype).float()
        out[s] = torch.einsum("ht,thd->hd", probs, v).to(out.dtype)


def _paged_attention_v1_reference(out, query, key_cache, value_cache, num_kv_heads, scale,  # noqa: ANN001
                                  block_tables, seq_lens, block_size, max_seq_len, alibi_slopes,
                                  kv_cache_dtype, k_scale, v_scale, tp_rank=0,
                                  blocksparse_local_blocks=0, blocksparse_vert_stride=0,
                                  blocksparse_block_size=64,
                                  blocksparse_head_sliding_step=0) -> None:
    _paged_attention(out, query, key_cache, value_cache, num_kv_heads, scale, block_tables,
                     seq_lens, alibi_slopes)


def _paged_attention_v2_reference(out, exp_sum, max_logits, tmp_out, query, key_cache,  # noqa: ANN001
                                  value_cache, num_kv_heads, scale, block_tables, seq_lens,
                                  block_size, max_seq_len, alibi_slopes, kv_cache_dtype,
                                  k_scale, v_scale, tp_rank=0, blocksparse_local_blocks=0,
                                  blocksparse_vert_stride=0, blocksparse_block_size=64,
                                  blocksparse_head_sliding_step=0) -> None:
    # The partition buffers are scratch: only ``out`` is compared (see ``compared``).
    _paged_attention(out, query, key_cache, value_cache, num_kv_heads, scale, block_tables,
                     seq_lens, alibi_slopes)


def _out_only(returned: Any, args: Any) -> Any:
    return args[0]


def _paged_cases(v2: bool) -> tuple[ShapeCase, ...]:
    long = (600, 37) if v2 else (70, 37)
    large_lens = tuple(1 + (i * 1237) % 4096 for i in range(32))
    return (
        ShapeCase("gqa_odd_lens", {"seq_lens": (1, 37, 70), "num_heads": 8, "num_kv_heads": 2,
                                   "head_size": 32, "block_size": 16}),
        ShapeCase("mha_block8", {"seq_lens": (9, 23), "num_heads": 2, "num_kv_heads": 2,
                                 "head_size": 64, "block_size": 8}),
        ShapeCase("alibi", {"seq_lens": long, "num_heads": 4, "num_kv_heads": 1,
                            "head_size": 32, "block_size": 16, "alibi": True}),
        ShapeCase("mqa_head80", {"seq_lens": (50, 3), "num_heads": 3, "num_kv_heads": 1,
                                 "head_size": 80, "block_size": 32}),
        ShapeCase("heldout_mix", {"seq_lens": (5, 16, 33) if not v2 else (530, 16),
                                  "num_heads": 6, "num_kv_heads": 2, "head_size": 32,
                                  "block_size": 8}, heldout=True),
        ShapeCase("llama_decode", {"seq_lens": large_lens, "num_heads": 32, "num_kv_heads": 8,
                                   "head_size": 128, "block_size": 16}, tier=LARGE),
    )


def _paged_flops(p: Mapping[str, Any]) -> float:
    return 4.0 * sum(p["seq_lens"]) * p["num_heads"] * p["head_size"]


def _paged_bytes(p: Mapping[str, Any], size: int) -> float:
    kv = 2 * sum(p["seq_lens"]) * p["num_kv_heads"] * p["head_size"]
    qo = 2 * len(p["seq_lens"]) * p["num_heads"] * p["head_size"]
    return float((kv + qo) * size)


_PAGED_COMMON = (
    "Decode attention over vLLM's paged KV cache: one query token per sequence, query "
    "[num_seqs, num_heads, head_size]; key_cache [num_blocks, num_kv_heads, head_size // x, "
    "block_size, x] with x = 16 // element_size (key element d of the token at position t is "
    "key_cache[block, kv_head, d // x, t % block_size, d % x] with block = block_tables[s, t // "
    "block_size]); value_cache [num_blocks, num_kv_heads, head_size, block_size] (element d at "
    "value_cache[block, kv_head, d, t % block_size]). block_tables int32 [num_seqs, "
    "max_blocks]; seq_lens int32 [num_seqs] (>= 1, not multiples of block_size; tokens t < "
    "seq_lens[s] are the context, table entries past them must be ignored); max_seq_len = "
    "max(seq_lens). Grouped-query attention: q head h uses kv head h // (num_heads // "
    "num_kv_heads). logits = scale * (q . k) computed in float32, plus alibi_slopes[h] * (t - "
    "seq_len + 1) when alibi_slopes (float32 [num_heads]) is not None; softmax in float32 with "
    "the max subtracted, probabilities p = e / (sum(e) + 1e-6), which vLLM rounds to the "
    "activation dtype before the product with V (accumulated in float32); out[s, h] = sum_t "
    "p_t v_t rounded to the query's dtype (float32, float16 or bfloat16; the caches have the "
    "same dtype). kv_cache_dtype is 'auto' (k_scale, v_scale are float32 1.0, unused); tp_rank "
    "is 0 and the blocksparse arguments (0, 0, 64, 0) disable block-sparse attention. ")


def _merge_inputs(ctx: InputContext) -> list[Any]:
    torch = ctx.torch
    p = ctx.params
    tokens, heads, size = p["num_tokens"], p["num_heads"], p["head_size"]
    prefix = ctx.randn(tokens, heads, size)
    suffix = ctx.randn(tokens, heads, size)
    shift = p.get("lse_shift", 0.0)
    prefix_lse = ctx.uniform(heads, tokens, low=-4.0 + shift, high=4.0 + shift,
                             dtype=torch.float32)
    suffix_lse = ctx.uniform(heads, tokens, low=-4.0 + shift, high=4.0 + shift,
                             dtype=torch.float32)
    if p.get("infinities"):
        # Empty prefixes (-inf), a +inf that vLLM reads as -inf, and both empty (-inf, -inf).
        n = heads * tokens
        picks = torch.randperm(n, generator=ctx.generator)[: max(4, n // 4)]
        quarter = len(picks) // 4
        flat_p, flat_s = prefix_lse.view(-1), suffix_lse.view(-1)
        flat_p[picks[:quarter]] = -math.inf
        flat_s[picks[quarter:2 * quarter]] = -math.inf
        flat_s[picks[2 * quarter:3 * quarter]] = math.inf
        flat_p[picks[3 * quarter:]] = -math.inf
        flat_s[picks[3 * quarter:]] = -math.inf
    output = ctx.randn(tokens, heads, size)
    output_lse = (ctx.randn(heads, tokens, dtype=torch.float32) if p.get("with_lse") else None)
    return [output, prefix, prefix_lse, suffix, suffix_lse, output_lse]


def _merge_attn_states_reference(output, prefix_output, prefix_lse, suffix_output,  # noqa: ANN001
                                 suffix_lse, output_lse=None) -> None:
    import torch

    neg_inf = torch.tensor(-math.inf, device=prefix_lse.device)
    p_lse = torch.where(torch.isinf(prefix_lse), neg_inf, prefix_lse.float())
    s_lse = torch.where(torch.isinf(suffix_lse), neg_inf, suffix_lse.float())
    max_lse = torch.maximum(p_lse, s_lse)
    empty = torch.isinf(max_lse)  # both -inf
    shift = torch.where(empty, torch.zeros_like(max_lse), max_lse)
    p_se, s_se = torch.exp(p_lse - shift), torch.exp(s_lse - shift)
    out_se = p_se + s_se
    p_scale = (p_se / out_se).t()[:, :, None]
    s_scale = (s_se / out_se).t()[:, :, None]
    merged = prefix_output.float() * p_scale + suffix_output.float() * s_scale
    merged = torch.where(empty.t()[:, :, None], prefix_output.float(), merged)
    output.copy_(merged.to(output.dtype))
    if output_lse is not None:
        output_lse.copy_(torch.where(empty, max_lse, torch.log(out_se) + max_lse))


MERGE_CASES = (
    ShapeCase("odd_tokens", {"num_tokens": 37, "num_heads": 4, "head_size": 64,
                             "with_lse": True}),
    ShapeCase("no_output_lse", {"num_tokens": 5, "num_heads": 3, "head_size": 128}),
    ShapeCase("infinities", {"num_tokens": 21, "num_heads": 4, "head_size": 32,
                             "with_lse": True, "infinities": True}),
    ShapeCase("large_lse", {"num_tokens": 16, "num_heads": 2, "head_size": 64,
                            "with_lse": True, "lse_shift": 95.0}),
    ShapeCase("heldout_mix", {"num_tokens": 11, "num_heads": 6, "head_size": 40,
                              "with_lse": True, "infinities": True, "lse_shift": 90.0},
              heldout=True),
    ShapeCase("llama_prefill", {"num_tokens": 4096, "num_heads": 32, "head_size": 128,
                                "with_lse": True}, tier=LARGE),
    ShapeCase("deepseek_mla", {"num_tokens": 2048, "num_heads": 128, "head_size": 128,
                               "with_lse": True, "infinities": True}, tier=LARGE),
)


def operators() -> list[OperatorSpec]:
    return [
        vllm_op(
            "paged_attention_v1",
            signature="kernel(out: Tensor, query: Tensor, key_cache: Tensor, value_cache: Tensor, "
                      "num_kv_heads: int, scale: float, block_tables: Tensor, seq_lens: Tensor, "
                      "block_size: int, max_seq_len: int, alibi_slopes: Tensor | None, "
                      "kv_cache_dtype: str, k_scale: Tensor, v_scale: Tensor, tp_rank: int, "
                      "blocksparse_local_blocks: int, blocksparse_vert_stride: int, "
                      "blocksparse_block_size: int, blocksparse_head_sliding_step: int) -> None",
            description="vLLM's paged_attention_v1. " + _PAGED_COMMON
                        + "Writes out [num_seqs, num_heads, head_size] in place (pre-filled "
                          "with garbage); every other argument must not be modified. "
                          "Returns None.",
            reference=_paged_attention_v1_reference,
            make_inputs=lambda ctx: _paged_inputs(ctx, v2=False),
            cases=_paged_cases(v2=False),
            flops=_paged_flops,
            bytes_moved=_paged_bytes,
            tags=("attention", "out_param"),
            mutated_args=(0,),
            reduce_dim=lambda p: p["head_size"],
            vllm_callable="vllm._custom_ops.paged_attention_v1",
        ),
        vllm_op(
            "paged_attention_v2",
            signature="kernel(out: Tensor, exp_sum: Tensor, max_logits: Tensor, tmp_out: Tensor, "
                      "query: Tensor, key_cache: Tensor, value_cache: Tensor, num_kv_heads: int, "
                      "scale: float, block_tables: Tensor, seq_lens: Tensor, block_size: int, "
                      "max_seq_len: int, alibi_slopes: Tensor | None, kv_cache_dtype: str, "
                      "k_scale: Tensor, v_scale: Tensor, tp_rank: int, "
                      "blocksparse_local_blocks: int, blocksparse_vert_stride: int, "
                      "blocksparse_block_size: int, blocksparse_head_sliding_step: int) -> None",
            description="vLLM's paged_attention_v2, the split-KV form of paged_attention_v1 "
                        "with the same result up to rounding. " + _PAGED_COMMON
                        + "Writes out [num_seqs, num_heads, head_size] in place (pre-filled "
                          "with garbage). exp_sum and max_logits (float32 [num_seqs, "
                          "num_heads, max_num_partitions]) and tmp_out ([num_seqs, num_heads, "
                          "max_num_partitions, head_size], the query's dtype), with "
                          "max_num_partitions = ceil(max_seq_len / 512), are scratch buffers "
                          "for per-512-token-partition maxima, exp sums and partial outputs: "
                          "the kernel may write them (vLLM does), and they are not compared; "
                          "only out is. Every other argument must not be modified. Returns "
                          "None.",
            reference=_paged_attention_v2_reference,
            make_inputs=lambda ctx: _paged_inputs(ctx, v2=True),
            cases=_paged_cases(v2=True),
            flops=_paged_flops,
            bytes_moved=_paged_bytes,
            tags=("attention", "out_param"),
            mutated_args=(0, 1, 2, 3),
            compared=_out_only,
            reduce_dim=lambda p: p["head_size"],
            vllm_callable="vllm._custom_ops.paged_attention_v2",
        ),
        vllm_op(
            "merge_attn_states",
            signature="kernel(output: Tensor, prefix_output: Tensor, prefix_lse: Tensor, "
                      "suffix_output: Tensor, suffix_lse: Tensor, "
                      "output_lse: Tensor | None) -> None",
            description="vLLM's merge_attn_states: merges two partial attention results by "
                        "their log-sum-exps (section 2.2 of arXiv:2501.01005). prefix_output, "
                        "suffix_output and output are [num_tokens, num_heads, head_size] "
                        "(float32, float16 or bfloat16); prefix_lse, suffix_lse and output_lse "
                        "are float32 [num_heads, num_tokens] (heads first). Per (token, head): "
                        "an lse of +inf or -inf is taken as -inf; m = max(p_lse, s_lse); if m "
                        "is -inf (both empty) output = prefix_output and output_lse = -inf; "
                        "otherwise p = exp(p_lse - m), s = exp(s_lse - m), output = "
                        "prefix_output * p / (p + s) + suffix_output * s / (p + s) computed in "
                        "float32 and rounded to output's dtype, and output_lse = log(p + s) + "
                        "m. lse values can be large (around 100), so the max must be "
                        "subtracted before exp. output (pre-filled with garbage) and "
                        "output_lse (when not None) are written in place; the other arguments "
                        "must not be modified. Returns None.",
            reference=_merge_attn_states_reference,
            make_inputs=_merge_inputs,
            cases=MERGE_CASES,
            flops=lambda p: 4.0 * p["num_tokens"] * p["num_heads"] * p["head_size"],
            bytes_moved=lambda p, size: (3 * p["num_tokens"] * p["num_heads"] * p["head_size"]
                                         * size + 12 * p["num_tokens"] * p["num_heads"]),
            tags=("attention", "out_param"),
            mutated_args=(0, 5),
            vllm_callable="vllm._custom_ops.merge_attn_states",
        ),
    ]
