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
from typing import Any, Mapping, Sequence

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
        _convert_vertical_slash_indexes(),
    ]


# -- convert_vertical_slash_indexes (MInference sparse prefill) -------------------------------
# vLLM 0.13, csrc/attention/vertical_slash_index.cu (from MInference): for every (batch, head,
# row block of block_size_M queries), turn the head's vertical indexes (key columns every query
# attends to, ascending) and slash indexes (diagonal offsets, descending) into the KV blocks
# (block_offset, block_count) and the single key columns outside them (column_index,
# column_count) a block-sparse attention kernel visits. The reference below replays the CUDA
# kernel's sequential state machine step by step.

class _VerticalSlashOverflow(RuntimeError):
    """More blocks than NNZ_S slots in a row: vLLM would write into the next row (undefined)."""


def _vertical_slash_row(verticals, slashes, q_len, kv_len, start_m, block_m, block_n,
                        causal):  # noqa: ANN001, ANN202
    nnz_v, nnz_s = len(verticals), len(slashes)
    end_m = start_m + block_m
    shift = kv_len - q_len if causal else kv_len  # where row end_m's diagonal sits in kv
    blocks: list[int] = []
    columns: list[int] = []

    def save_blocks(range_start: int, range_end: int) -> None:
        if range_start >= kv_len:
            return
        for idx in range(range_start, min(range_end, kv_len), block_n):
            blocks.append(idx)

    v, s = 1, 1
    v_idx, s_idx = verticals[0], slashes[0]
    while s_idx >= end_m + shift and s < nnz_s:
        s_idx = slashes[s]
        s += 1
    has_slash = not s_idx > end_m + shift
    s_idx = max(shift + end_m - s_idx, block_m)
    range_start, range_end = s_idx - block_m, s_idx
    if not has_slash:
        if causal:
            range_start, range_end = shift + end_m, shift + end_m + block_n
        else:
            range_start, range_end = kv_len, kv_len + block_n
    slash_finished = False
    for _ in range(4 * (nnz_v + nnz_s) + 16):  # the CUDA loop is `while (1)`
        if v_idx < range_end:
            if v_idx < range_start:
                columns.append(v_idx)
            if v < nnz_v:
                v_idx = verticals[v]
                v += 1
            else:
                v_idx = end_m + block_n + shift
            continue
        if s < nnz_s and (causal or slashes[s] >= start_m):
            s_idx = max(shift + end_m - slashes[s], block_m)
            s += 1
        elif v == nnz_v or (v_idx > range_start and causal):
            if v == nnz_v and not causal and v_idx < kv_len:
                columns.append(v_idx)
            save_blocks(range_start, range_end)
            break
        else:
            if causal:
                range_start, range_end = shift + end_m, shift + end_m + block_n
            else:
                save_blocks(range_start, range_end)
                range_start, range_end = kv_len, kv_len + block_n
            slash_finished = True
        if not slash_finished:
            if s_idx > range_end + block_m:
                save_blocks(range_start, range_end)
                range_start, range_end = s_idx - block_m, s_idx
            elif s_idx > range_end:
                range_end += block_m
    else:
        raise _VerticalSlashOverflow("the vertical/slash state machine did not finish "
                                     "(a vertical index at or past kv_seqlen + block_size_N?)")
    if len(blocks) > nnz_s:
        raise _VerticalSlashOverflow(f"{len(blocks)} blocks for {nnz_s} slots")
    return blocks, columns


def _vertical_slash_reference(block_count, block_offset, column_count, column_index,  # noqa: ANN001, ANN202
                              q_seqlens, kv_seqlens, vertical_indexes, slash_indexes,  # noqa: ANN001
                              context_size, block_size_M, block_size_N, causal):  # noqa: ANN001
    import torch

    batch, heads, _ = slash_indexes.shape
    rows = -(-context_size // block_size_M)
    q_lens, kv_lens = q_seqlens.tolist(), kv_seqlens.tolist()
    verticals_all, slashes_all = vertical_indexes.tolist(), slash_indexes.tolist()
    counts = block_count.cpu().clone()
    offsets = block_offset.cpu().clone()
    col_counts = column_count.cpu().clone()
    col_index = column_index.cpu().clone()
    for b in range(batch):
        for h in range(heads):
            for m in range(rows):
                start_m = m * block_size_M
                if start_m >= q_lens[b]:
                    continue  # vLLM leaves the row as it was
                blocks, columns = _vertical_slash_row(
                    verticals_all[b][h], slashes_all[b][h], q_lens[b], kv_lens[b], start_m,
                    block_size_M, block_size_N, causal)
                counts[b, h, m] = len(blocks)
                col_counts[b, h, m] = len(columns)
                if blocks:
                    offsets[b, h, m, :len(blocks)] = torch.tensor(blocks, dtype=torch.int32)
                if columns:
                    col_index[b, h, m, :len(columns)] = torch.tensor(columns,
                                                                     dtype=torch.int32)
    block_count.copy_(counts)
    block_offset.copy_(offsets)
    column_count.copy_(col_counts)
    column_index.copy_(col_index)


def _vertical_slash_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    q_lens, kv_lens = list(p["q_seqlens"]), list(p["kv_seqlens"])
    batch, heads, nnz_v, nnz_s = len(q_lens), p["heads"], p["nnz_v"], p["nnz_s"]
    rows = -(-p["context_size"] // p["block_m"])
    verticals = torch.empty(batch, heads, nnz_v, dtype=torch.int32)
    slashes = torch.empty(batch, heads, nnz_s, dtype=torch.int32)
    for b in range(batch):
        for h in range(heads):
            # As vLLM's callers pass them: distinct key columns in ascending order, distinct
            # diagonal offsets in descending order, all below kv_seqlen.
            cols = torch.randperm(kv_lens[b], generator=ctx.generator)[:nnz_v]
            verticals[b, h] = cols.sort().values.to(torch.int32)
            diag = torch.randperm(kv_lens[b], generator=ctx.generator)[:nnz_s]
            if p.get("near_diagonal"):  # most attention mass near the diagonal, as in LLMs
                diag = torch.randperm(min(kv_lens[b], 4 * nnz_s),
                                      generator=ctx.generator)[:nnz_s]
            if p.get("far_slashes"):  # offsets in the upper half only: ranges end early
                low = kv_lens[b] // 2
                diag = low + torch.randperm(kv_lens[b] - low, generator=ctx.generator)[:nnz_s]
            slashes[b, h] = diag.sort(descending=True).values.to(torch.int32)

    def garbage(*shape: int):  # noqa: ANN202
        return ctx.randint(*shape, low=-(2 ** 20), high=2 ** 20, dtype=torch.int32)

    return [garbage(batch, heads, rows), garbage(batch, heads, rows, nnz_s),
            garbage(batch, heads, rows), garbage(batch, heads, rows, nnz_v),
            torch.tensor(q_lens, dtype=torch.int32, device=ctx.device),
            torch.tensor(kv_lens, dtype=torch.int32, device=ctx.device),
            verticals.to(ctx.device), slashes.to(ctx.device), int(p["context_size"]),
            int(p["block_m"]), int(p["block_n"]), bool(p["causal"])]


def _vertical_slash_compared(_returned: Any, args: Sequence[Any]) -> Any:
    """The defined part of each output: counts of the row blocks with start_m < q_seqlen, and
    the first count entries of their offset and column lists. vLLM leaves everything else as
    it was (its wrapper zero-fills the buffers first), so it is not compared."""
    import torch

    block_count, block_offset, column_count, column_index, q_seqlens = args[:5]
    block_m = args[9]
    batch, heads, rows = block_count.shape
    live = (torch.arange(rows, device=block_count.device)[None, :] * block_m
            < q_seqlens.long()[:, None])[:, None, :].expand(batch, heads, rows)
    views = []
    for count, values in ((block_count, block_offset), (column_count, column_index)):
        width = values.shape[-1]
        shown = torch.where(live, count, torch.zeros_like(count))
        kept = (torch.arange(width, device=values.device)[None, None, None, :]
                < shown.long().clamp(0, width)[..., None])
        views += [shown, torch.where(kept, values, torch.zeros_like(values))]
    return views


VERTICAL_SLASH_CASES = (
    ShapeCase("causal_prefill", {"q_seqlens": (128, 100), "kv_seqlens": (128, 100),
                                 "context_size": 128, "heads": 2, "nnz_v": 12, "nnz_s": 16,
                                 "block_m": 16, "block_n": 16, "causal": True}),
    ShapeCase("causal_with_context", {"q_seqlens": (64, 96), "kv_seqlens": (160, 200),
                                      "context_size": 96, "heads": 2, "nnz_v": 20,
                                      "nnz_s": 24, "block_m": 16, "block_n": 16,
                                      "causal": True, "near_diagonal": True}),
    ShapeCase("succ_noncausal", {"q_seqlens": (80, 48), "kv_seqlens": (144, 112),
                                 "context_size": 80, "heads": 3, "nnz_v": 10, "nnz_s": 16,
                                 "block_m": 16, "block_n": 32, "causal": False}),
    ShapeCase("succ_far_slashes", {"q_seqlens": (64, 32), "kv_seqlens": (128, 160),
                                   "context_size": 64, "heads": 2, "nnz_v": 12, "nnz_s": 8,
                                   "block_m": 16, "block_n": 16, "causal": False,
                                   "far_slashes": True}),
    ShapeCase("rows_past_q_seqlen", {"q_seqlens": (40, 130), "kv_seqlens": (40, 130),
                                     "context_size": 160, "heads": 1, "nnz_v": 8,
                                     "nnz_s": 16, "block_m": 32, "block_n": 16,
                                     "causal": True}),
    ShapeCase("heldout_mixed", {"q_seqlens": (72, 120), "kv_seqlens": (90, 120),
                                "context_size": 120, "heads": 2, "nnz_v": 9, "nnz_s": 20,
                                "block_m": 16, "block_n": 16, "causal": True},
              heldout=True),
    ShapeCase("minference_llama3_32k", {"q_seqlens": (32768,), "kv_seqlens": (32768,),
                                        "context_size": 32768, "heads": 32, "nnz_v": 1000,
                                        "nnz_s": 6096, "block_m": 64, "block_n": 64,
                                        "causal": True, "near_diagonal": True}, tier=LARGE),
    ShapeCase("minference_chunked_8k", {"q_seqlens": (8192, 8192), "kv_seqlens": (16384, 12288),
                                        "context_size": 8192, "heads": 32, "nnz_v": 1000,
                                        "nnz_s": 2048, "block_m": 64, "block_n": 64,
                                        "causal": True}, tier=LARGE),
)


def _convert_vertical_slash_indexes() -> OperatorSpec:
    def rows(p: Mapping[str, Any]) -> int:
        return len(p["q_seqlens"]) * p["heads"] * -(-p["context_size"] // p["block_m"])

    return vllm_op(
        "convert_vertical_slash_indexes",
        signature="kernel(block_count: Tensor, block_offset: Tensor, column_count: Tensor, "
                  "column_index: Tensor, q_seqlens: Tensor, kv_seqlens: Tensor, "
                  "vertical_indexes: Tensor, slash_indexes: Tensor, context_size: int, "
                  "block_size_M: int, block_size_N: int, causal: bool) -> None",
        description=(
            "vLLM's convert_vertical_slash_indexes (torch.ops._C; MInference's "
            "vertical-and-slash sparse prefill, csrc/attention/vertical_slash_index.cu). "
            "Inputs: q_seqlens, kv_seqlens int32 [batch]; vertical_indexes int32 [batch, "
            "heads, NNZ_V] (distinct key columns, ascending, < kv_seqlen); slash_indexes int32 "
            "[batch, heads, NNZ_S] (distinct diagonal offsets, descending, < kv_seqlen). "
            "Out-parameters (int32): block_count and column_count [batch, heads, rows], "
            "block_offset [batch, heads, rows, NNZ_S], column_index [batch, heads, rows, "
            "NNZ_V], rows = ceil(context_size / block_size_M). Each (batch b, head h, row "
            "block m) with start_m = m * block_size_M < q_seqlens[b] runs vLLM's sequential "
            "merge, exactly (with end_m = start_m + M, M = block_size_M, N = block_size_N, "
            "q/kv the row's lengths, shift = kv - q when causal else kv, V/S the head's "
            "vertical/slash lists): v = s = 1, v_idx = V[0], s_idx = S[0]; while s_idx >= "
            "end_m + shift and s < NNZ_S: s_idx = S[s++]; has_slash = !(s_idx > end_m + "
            "shift); s_idx = max(shift + end_m - s_idx, M); range = [s_idx - M, s_idx), or "
            "when !has_slash [shift + end_m, shift + end_m + N) (causal) / [kv, kv + N) (not "
            "causal). Loop: if v_idx < range_end { if v_idx < range_start append v_idx to "
            "the columns; v_idx = V[v++] if v < NNZ_V else end_m + N + shift } else { if s < "
            "NNZ_S and (causal or S[s] >= start_m): s_idx = max(shift + end_m - S[s++], M); "
            "else if v == NNZ_V or (causal and v_idx > range_start): { if !causal and v == "
            "NNZ_V and v_idx < kv append v_idx to the columns; save(range); stop } else { "
            "causal: range = [shift + end_m, shift + end_m + N); not causal: save(range), range = [kv, kv + N); "
            "slash_finished = true }; unless slash_finished (or stopped): if s_idx > "
            "range_end + M { save(range); range = [s_idx - M, s_idx) } else if s_idx > "
            "range_end: range_end += M }. save([a, e)): nothing if a >= kv, else append a, a "
            "+ N, ... while < min(e, kv) to the blocks. The row's blocks go to block_offset[b, "
            "h, m, :block_count] and its columns to column_index[b, h, m, :column_count]. "
            "Compared exactly: the counts of the rows with start_m < q_seqlen and the first "
            "count entries of their lists; everything else is left undefined (vLLM does not "
            "write it). Inputs must be left unchanged. Returns None."),
        reference=_vertical_slash_reference, make_inputs=_vertical_slash_inputs,
        cases=VERTICAL_SLASH_CASES, dtypes=("int32",),
        flops=lambda p: rows(p) * (p["nnz_v"] + p["nnz_s"]),
        bytes_moved=lambda p, size: 4 * rows(p) * (2 + p["nnz_v"] + p["nnz_s"]) * 2,
        tags=("attention", "sparse", "out_param"), mutated_args=(0, 1, 2, 3),
        compared=_vertical_slash_compared,
        host_reference=True,  # a Python loop over the host's values: 20 s a call on the H100
        vllm_callable="torch.ops._C.convert_vertical_slash_indexes",
    )
