"""KV-cache management ops of vLLM 0.13: writing new tokens into the paged caches
(``reshape_and_cache``, ``reshape_and_cache_flash``, ``concat_and_cache_mla``), copying and
swapping whole blocks (``copy_blocks``, ``copy_blocks_mla``, ``swap_blocks``) and gathering a
request's blocks into a contiguous buffer (``cp_gather_cache``, ``gather_and_maybe_dequant_cache``).

Facts they rest on (vLLM 0.13, csrc/cache_kernels.cu, csrc/torch_bindings.cpp, vllm/_custom_ops.py):
- the paged layout of ``reshape_and_cache``: key_cache [num_blocks, num_heads, head_size/x,
  block_size, x] with x = 16 // element_size, value_cache [num_blocks, num_heads, head_size,
  block_size]; the flash layout: [num_blocks, block_size, num_heads, head_size], addressed
  through the caches' strides (block, page and head stride), so a cache may be a view of a
  [num_blocks, 2, block_size, num_heads, head_size] tensor (FlashInfer's layout);
- slot = block * block_size + offset; a negative slot (-1) is a padding token and is skipped;
- kv_cache_dtype "auto" stores the values unchanged (the cache has the activations' dtype);
- copy_blocks / copy_blocks_mla copy block src to block dst of every layer's caches for each row
  (src, dst) of an int64 [n, 2] mapping; swap_blocks(src, dst, mapping) copies src[s] to dst[d]
  (vLLM swaps between CPU and GPU memory; kgb checks the same-device case);
- cp_gather_cache gathers request b's tokens seq_starts[b] + i (i < cu_seq_lens[b+1] -
  cu_seq_lens[b]) into dst row cu_seq_lens[b] + i; gather_and_maybe_dequant_cache does the same
  per dst token through token_to_seq, for the 576-wide MLA latent cache only.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase, Tolerance

from kgb_sources.vllm._build import FLOATS, vllm_op

# Writing and copying cache entries moves values unchanged: the caches must match bit for bit.
EXACT = {dtype: Tolerance(rtol=0.0, atol=0.0) for dtype in FLOATS}


def _x(dtype: Any) -> int:
    import torch

    return 16 // torch.empty((), dtype=dtype).element_size()


def _slot_mapping(ctx: InputContext, num_tokens: int, num_slots: int, pad: int) -> Any:
    """Distinct cache slots for the real tokens and -1 for ``pad`` padding tokens, one of them
    the last token (vLLM pads batches at the end for CUDA graphs), the rest anywhere."""
    torch = ctx.torch
    slots = torch.randperm(num_slots, generator=ctx.generator)[:num_tokens].clone()
    if pad:
        others = torch.randperm(num_tokens - 1, generator=ctx.generator)[:pad - 1]
        slots[others] = -1
        slots[num_tokens - 1] = -1
    return slots.to(torch.int64).to(ctx.device)


def _scale(ctx: InputContext) -> Any:
    return ctx.torch.ones((), dtype=ctx.torch.float32).to(ctx.device)


# -- reshape_and_cache (paged layout) -------------------------------------------------------
def _paged_cache_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    tokens, heads, size = p["num_tokens"], p["num_heads"], p["head_size"]
    blocks, block_size = p["num_blocks"], p["block_size"]
    x = _x(ctx.dtype)
    rows = tokens + p.get("extra_rows", 0)
    if p.get("packed_kv"):
        # key and value as views of one [rows, 2, heads, size] buffer: token stride 2*h*d.
        kv = ctx.randn(rows, 2, heads, size)
        key, value = kv[:, 0], kv[:, 1]
    else:
        key, value = ctx.randn(rows, heads, size), ctx.randn(rows, heads, size)
    key_cache = ctx.randn(blocks, heads, size // x, block_size, x)
    value_cache = ctx.randn(blocks, heads, size, block_size)
    slots = _slot_mapping(ctx, tokens, blocks * block_size, p["pad"])
    return [key, value, key_cache, value_cache, slots, "auto", _scale(ctx), _scale(ctx)]


def _reshape_and_cache_reference(key, value, key_cache, value_cache, slot_mapping,  # noqa: ANN001
                                 kv_cache_dtype, k_scale, v_scale) -> None:
    _, heads, size_x, block_size, x = key_cache.shape
    tokens = slot_mapping.shape[0]  # key may have more rows (CUDA-graph padding)
    valid = slot_mapping >= 0
    slots = slot_mapping[valid]
    blocks, offsets = slots // block_size, slots % block_size
    key_cache[blocks, :, :, offsets, :] = key[:tokens][valid].reshape(-1, heads, size_x, x)
    value_cache[blocks, :, :, offsets] = value[:tokens][valid]


# -- reshape_and_cache_flash -----------------------------------------------------------------
def _flash_cache_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    tokens, heads, size = p["num_tokens"], p["num_heads"], p["head_size"]
    blocks, block_size = p["num_blocks"], p["block_size"]
    rows = tokens + p.get("extra_rows", 0)
    key, value = ctx.randn(rows, heads, size), ctx.randn(rows, heads, size)
    if p.get("flashinfer"):
        # FlashInfer's [num_blocks, 2, block_size, heads, size]: each cache a strided view.
        kv_cache = ctx.randn(blocks, 2, block_size, heads, size)
        key_cache, value_cache = kv_cache[:, 0], kv_cache[:, 1]
    else:
        key_cache = ctx.randn(blocks, block_size, heads, size)
        value_cache = ctx.randn(blocks, block_size, heads, size)
    slots = _slot_mapping(ctx, tokens, blocks * block_size, p["pad"])
    return [key, value, key_cache, value_cache, slots, "auto", _scale(ctx), _scale(ctx)]


def _reshape_and_cache_flash_reference(key, value, key_cache, value_cache,  # noqa: ANN001
                                       slot_mapping, kv_cache_dtype, k_scale, v_scale) -> None:
    block_size = key_cache.shape[1]
    tokens = slot_mapping.shape[0]  # key may have more rows (CUDA-graph padding)
    valid = slot_mapping >= 0
    slots = slot_mapping[valid]
    blocks, offsets = slots // block_size, slots % block_size
    key_cache[blocks, offsets] = key[:tokens][valid]
    value_cache[blocks, offsets] = value[:tokens][valid]


# -- concat_and_cache_mla --------------------------------------------------------------------
def _mla_cache_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    tokens, rank, rope = p["num_tokens"], p["kv_lora_rank"], p["rope_dim"]
    blocks, block_size = p["num_blocks"], p["block_size"]
    rows = tokens + p.get("extra_rows", 0)
    if p.get("split"):
        # kv_c and k_pe as column slices of the projection's output, as DeepSeek's
        # kv_a.split([kv_lora_rank, rope_dim], dim=-1) makes them: row stride rank + rope.
        kv_a = ctx.randn(rows, rank + rope)
        kv_c, k_pe = kv_a[:, :rank], kv_a[:, rank:]
    else:
        kv_c, k_pe = ctx.randn(rows, rank), ctx.randn(rows, rope)
    kv_cache = ctx.randn(blocks, block_size, rank + rope)
    slots = _slot_mapping(ctx, tokens, blocks * block_size, p["pad"])
    return [kv_c, k_pe, kv_cache, slots, "auto", _scale(ctx)]


def _concat_and_cache_mla_reference(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype,  # noqa: ANN001
                                    scale) -> None:
    import torch

    block_size = kv_cache.shape[1]
    tokens = slot_mapping.shape[0]  # kv_c may have more rows (CUDA-graph padding)
    valid = slot_mapping >= 0
    slots = slot_mapping[valid]
    kv_cache[slots // block_size, slots % block_size] = torch.cat(
        [kv_c[:tokens][valid], k_pe[:tokens][valid]], -1)


# -- copy_blocks / copy_blocks_mla / swap_blocks ------------------------------------------------
def _copy_mapping(ctx: InputContext, blocks: int, sources: int) -> Any:
    """vLLM's tests' mapping: ``sources`` distinct source blocks, each copied to two distinct
    destinations taken from the other blocks, so no block is both read and written."""
    torch = ctx.torch
    order = torch.randperm(blocks, generator=ctx.generator)
    src, dst = order[:sources], order[sources:3 * sources]
    mapping = torch.stack([src.repeat_interleave(2), dst], dim=1)
    return mapping.to(torch.int64).to(ctx.device)


def _copy_blocks_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    blocks, heads, size, block_size = p["num_blocks"], p["num_heads"], p["head_size"], p["block_size"]
    x = _x(ctx.dtype)
    key_caches = [ctx.randn(blocks, heads, size // x, block_size, x) for _ in range(p["num_layers"])]
    value_caches = [ctx.randn(blocks, heads, size, block_size) for _ in range(p["num_layers"])]
    return [key_caches, value_caches, _copy_mapping(ctx, blocks, p["num_sources"])]


def _copy_blocks_reference(key_caches, value_caches, block_mapping) -> None:  # noqa: ANN001
    src, dst = block_mapping[:, 0], block_mapping[:, 1]
    for cache in list(key_caches) + list(value_caches):
        cache[dst] = cache[src]


def _copy_blocks_mla_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    caches = [ctx.randn(p["num_blocks"], p["block_size"], p["entry_size"])
              for _ in range(p["num_layers"])]
    return [caches, _copy_mapping(ctx, p["num_blocks"], p["num_sources"])]


def _copy_blocks_mla_reference(kv_caches, block_mapping) -> None:  # noqa: ANN001
    src, dst = block_mapping[:, 0], block_mapping[:, 1]
    for cache in kv_caches:
        cache[dst] = cache[src]


def _swap_blocks_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    torch = ctx.torch
    shape = (p["block_size"], p["num_heads"], p["head_size"])
    src = ctx.randn(p["src_blocks"], *shape)
    dst = ctx.randn(p["dst_blocks"], *shape)
    n = p["num_swaps"]
    # Distinct destinations (two writes to one block would race); sources may be anything.
    src_ids = torch.randint(0, p["src_blocks"], (n,), generator=ctx.generator)
    dst_ids = torch.randperm(p["dst_blocks"], generator=ctx.generator)[:n]
    mapping = torch.stack([src_ids, dst_ids], dim=1).to(torch.int64).to(ctx.device)
    return [src, dst, mapping]


def _swap_blocks_reference(src, dst, block_mapping) -> None:  # noqa: ANN001
    dst[block_mapping[:, 1]] = src[block_mapping[:, 0]]


# -- cp_gather_cache / gather_and_maybe_dequant_cache ---------------------------------------
def _requests(ctx: InputContext) -> tuple[Any, Any, Any, int]:
    """Per-request context lengths, start offsets and block tables over a shared pool.

    Each request owns distinct cache blocks (a request's table entries past what its tokens
    need hold other valid block ids, as a reused table row would). Returns (block_table int32
    [batch, width], cu_seq_lens int32 [batch + 1], seq_starts int32 [batch] or None, total)."""
    torch = ctx.torch
    p = ctx.params
    lens = torch.tensor(p["seq_lens"], dtype=torch.int64)
    batch = len(p["seq_lens"])
    block_size = p["block_size"]
    if p.get("with_starts"):
        starts = torch.randint(0, 3 * block_size, (batch,), generator=ctx.generator)
    else:
        starts = torch.zeros(batch, dtype=torch.int64)
    needed = (starts + lens + block_size - 1) // block_size
    # The table's width must not depend on the seed (the checker rewrites inputs in place).
    max_start = 3 * block_size - 1 if p.get("with_starts") else 0
    width = int(((lens + max_start + block_size - 1) // block_size).max())
    pool = torch.randperm(p["num_blocks"], generator=ctx.generator)
    if int(needed.sum()) > p["num_blocks"]:
        raise ValueError("case needs more blocks than the pool holds")
    table = torch.randint(0, p["num_blocks"], (batch, width), generator=ctx.generator)
    used = 0
    for b in range(batch):
        count = int(needed[b])
        table[b, :count] = pool[used:used + count]
        used += count
    cu = torch.zeros(batch + 1, dtype=torch.int64)
    cu[1:] = torch.cumsum(lens, 0)
    seq_starts = starts.to(torch.int32).to(ctx.device) if p.get("with_starts") else None
    return (table.to(torch.int32).to(ctx.device), cu.to(torch.int32).to(ctx.device),
            seq_starts, int(cu[-1]))


def _gather_rows(src_cache, block_table, cu_seq_lens, seq_starts, batch):  # noqa: ANN001, ANN202
    """(dst rows, cache blocks, cache offsets) of every gathered token, as int64 tensors."""
    import torch

    block_size = src_cache.shape[1]
    rows, blocks, offsets = [], [], []
    device = src_cache.device
    for b in range(batch):
        start, end = int(cu_seq_lens[b]), int(cu_seq_lens[b + 1])
        pos = torch.arange(end - start, device=device)
        if seq_starts is not None:
            pos = pos + int(seq_starts[b])
        rows.append(torch.arange(start, end, device=device))
        blocks.append(block_table[b].long()[pos // block_size])
        offsets.append(pos % block_size)
    return torch.cat(rows), torch.cat(blocks), torch.cat(offsets)


def _cp_gather_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    table, cu, starts, total = _requests(ctx)
    entry = tuple(p["entry_shape"])
    src_cache = ctx.randn(p["num_blocks"], p["block_size"], *entry)
    # Rows past the last request are scratch the op must leave alone.
    dst = ctx.randn(total + p["spare_rows"], *entry)
    return [src_cache, dst, table, cu, len(p["seq_lens"]), starts]


def _cp_gather_cache_reference(src_cache, dst, block_table, cu_seq_lens, batch_size,  # noqa: ANN001
                               seq_starts=None) -> None:
    rows, blocks, offsets = _gather_rows(src_cache, block_table, cu_seq_lens, seq_starts,
                                         batch_size)
    dst[rows] = src_cache[blocks, offsets]


def _gather_dequant_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    torch = ctx.torch
    table, cu, starts, total = _requests(ctx)
    src_cache = ctx.randn(p["num_blocks"], p["block_size"], 576)
    dst = ctx.randn(total + p["spare_rows"], 576)
    # token_to_seq is a buffer sized for the largest chunk; only the first num_tokens are read.
    lens = torch.tensor(p["seq_lens"], dtype=torch.int64)
    token_to_seq = torch.zeros(total + p["spare_rows"], dtype=torch.int32)
    token_to_seq[:total] = torch.repeat_interleave(torch.arange(len(p["seq_lens"])), lens).to(torch.int32)
    return [src_cache, dst, table, cu, token_to_seq.to(ctx.device), total, "auto", _scale(ctx),
            starts]


def _gather_and_maybe_dequant_cache_reference(src_cache, dst, block_table, cu_seq_lens,  # noqa: ANN001
                                              token_to_seq, num_tokens, kv_cache_dtype, scale,
                                              seq_starts=None) -> None:
    import torch

    block_size = src_cache.shape[1]
    tokens = torch.arange(num_tokens, device=dst.device)
    batch = token_to_seq[:num_tokens].long()
    start, end = cu_seq_lens.long()[batch], cu_seq_lens.long()[batch + 1]
    # vLLM's kernel stops at a token past its request's end; such tokens stay untouched.
    keep = tokens < end
    pos = tokens - start
    if seq_starts is not None:
        pos = pos + seq_starts.long()[batch]
    pos = pos.clamp_min(0)
    blocks = block_table.long()[batch, pos // block_size]
    dst[tokens[keep]] = src_cache[blocks[keep], (pos % block_size)[keep]]


# -- cp_gather_indexer_k_quant_cache -------------------------------------------------------
INDEXER_QUANT_BLOCK = 128  # DeepSeek V3.2's indexer: one float32 scale per 128 fp8 values


def _indexer_inputs(ctx: InputContext) -> list[Any]:
    torch = ctx.torch
    p = ctx.params
    table, cu, _, total = _requests(ctx)
    head_dim = p["head_dim"]
    scale_bytes = head_dim // INDEXER_QUANT_BLOCK * 4
    # Each block holds block_size * head_dim fp8 bytes (token-major), then block_size *
    # scale_bytes bytes of float32 scales: the [num_blocks, block_size, head_dim +
    # scale_bytes] shape is a byte buffer per block, not one entry per token.
    kv_cache = ctx.randint(p["num_blocks"], p["block_size"], head_dim + scale_bytes, low=0,
                           high=256, dtype=torch.uint8)
    dst_k = ctx.randint(total, head_dim, low=0, high=256, dtype=torch.uint8)
    dst_scale = ctx.randint(total, scale_bytes, low=0, high=256, dtype=torch.uint8)
    return [kv_cache, dst_k, dst_scale, table, cu]


def _cp_gather_indexer_k_quant_cache_reference(kv_cache, dst_k, dst_scale, block_table,  # noqa: ANN001
                                               cu_seq_lens) -> None:
    import torch

    block_size, head_dim, scale_bytes = kv_cache.shape[1], dst_k.shape[1], dst_scale.shape[1]
    rows, blocks, offsets = _gather_rows(kv_cache, block_table, cu_seq_lens, None,
                                         block_table.shape[0])
    flat = kv_cache.reshape(kv_cache.shape[0], -1)
    k_cols = offsets[:, None] * head_dim + torch.arange(head_dim, device=kv_cache.device)
    dst_k[rows] = flat[blocks[:, None], k_cols]
    s_cols = (block_size * head_dim + offsets[:, None] * scale_bytes
              + torch.arange(scale_bytes, device=kv_cache.device))
    dst_scale[rows] = flat[blocks[:, None], s_cols]


# -- cases --------------------------------------------------------------------------------------
def _paged_cases(large_heads: int = 8) -> tuple[ShapeCase, ...]:
    return (
        ShapeCase("odd_tokens", {"num_tokens": 13, "num_heads": 3, "head_size": 32,
                                 "block_size": 16, "num_blocks": 5, "pad": 2}),
        ShapeCase("one_token", {"num_tokens": 1, "num_heads": 2, "head_size": 64,
                                "block_size": 8, "num_blocks": 3, "pad": 0}),
        ShapeCase("packed_kv", {"num_tokens": 21, "num_heads": 4, "head_size": 16,
                                "block_size": 16, "num_blocks": 4, "pad": 3, "packed_kv": True}),
        ShapeCase("block32_graph_rows", {"num_tokens": 40, "num_heads": 2, "head_size": 48,
                                         "block_size": 32, "num_blocks": 3, "pad": 5,
                                         "extra_rows": 8}),
        ShapeCase("heldout_mix", {"num_tokens": 19, "num_heads": 5, "head_size": 24,
                                  "block_size": 8, "num_blocks": 6, "pad": 4, "extra_rows": 3},
                  heldout=True),
        ShapeCase("llama_prefill", {"num_tokens": 4096, "num_heads": large_heads,
                                    "head_size": 128, "block_size": 16, "num_blocks": 2048,
                                    "pad": 7}, tier=LARGE),
        ShapeCase("llama_decode", {"num_tokens": 256, "num_heads": large_heads, "head_size": 128,
                                   "block_size": 16, "num_blocks": 4096, "pad": 31}, tier=LARGE),
    )


FLASH_CASES = (
    ShapeCase("odd_tokens", {"num_tokens": 13, "num_heads": 3, "head_size": 32,
                             "block_size": 16, "num_blocks": 5, "pad": 2}),
    ShapeCase("one_token", {"num_tokens": 1, "num_heads": 2, "head_size": 64,
                            "block_size": 8, "num_blocks": 3, "pad": 0}),
    ShapeCase("flashinfer_views", {"num_tokens": 21, "num_heads": 4, "head_size": 16,
                                   "block_size": 16, "num_blocks": 4, "pad": 3,
                                   "flashinfer": True}),
    ShapeCase("head80_graph_rows", {"num_tokens": 40, "num_heads": 2, "head_size": 80,
                                    "block_size": 32, "num_blocks": 3, "pad": 5,
                                    "extra_rows": 8}),
    ShapeCase("heldout_mix", {"num_tokens": 19, "num_heads": 5, "head_size": 24,
                              "block_size": 8, "num_blocks": 6, "pad": 4, "flashinfer": True},
              heldout=True),
    ShapeCase("llama_prefill", {"num_tokens": 4096, "num_heads": 8, "head_size": 128,
                                "block_size": 16, "num_blocks": 2048, "pad": 7}, tier=LARGE),
    ShapeCase("llama_decode_flashinfer", {"num_tokens": 256, "num_heads": 8, "head_size": 128,
                                          "block_size": 16, "num_blocks": 4096, "pad": 31,
                                          "flashinfer": True}, tier=LARGE),
)

MLA_CASES = (
    ShapeCase("odd_tokens", {"num_tokens": 13, "kv_lora_rank": 64, "rope_dim": 16,
                             "block_size": 16, "num_blocks": 5, "pad": 2}),
    ShapeCase("split_views", {"num_tokens": 21, "kv_lora_rank": 48, "rope_dim": 16,
                              "block_size": 16, "num_blocks": 4, "pad": 3, "split": True}),
    ShapeCase("deepseek_graph_rows", {"num_tokens": 7, "kv_lora_rank": 512, "rope_dim": 64,
                                      "block_size": 8, "num_blocks": 2, "pad": 1,
                                      "extra_rows": 5}),
    ShapeCase("heldout_mix", {"num_tokens": 19, "kv_lora_rank": 40, "rope_dim": 24,
                              "block_size": 8, "num_blocks": 6, "pad": 4, "split": True},
              heldout=True),
    ShapeCase("deepseek_prefill", {"num_tokens": 4096, "kv_lora_rank": 512, "rope_dim": 64,
                                   "block_size": 64, "num_blocks": 1024, "pad": 9,
                                   "split": True}, tier=LARGE),
    ShapeCase("deepseek_decode", {"num_tokens": 128, "kv_lora_rank": 512, "rope_dim": 64,
                                  "block_size": 64, "num_blocks": 4096, "pad": 5}, tier=LARGE),
)

COPY_CASES = (
    ShapeCase("two_layers", {"num_layers": 2, "num_blocks": 9, "num_heads": 2, "head_size": 16,
                             "block_size": 8, "num_sources": 3}),
    ShapeCase("one_layer", {"num_layers": 1, "num_blocks": 5, "num_heads": 3, "head_size": 32,
                            "block_size": 16, "num_sources": 1}),
    ShapeCase("three_layers", {"num_layers": 3, "num_blocks": 12, "num_heads": 1,
                               "head_size": 64, "block_size": 8, "num_sources": 4}),
    ShapeCase("heldout_mix", {"num_layers": 2, "num_blocks": 10, "num_heads": 5, "head_size": 8,
                              "block_size": 16, "num_sources": 3}, heldout=True),
    ShapeCase("llama_32_layers", {"num_layers": 32, "num_blocks": 256, "num_heads": 8,
                                  "head_size": 128, "block_size": 16, "num_sources": 32},
              tier=LARGE),
)

COPY_MLA_CASES = (
    ShapeCase("two_layers", {"num_layers": 2, "num_blocks": 9, "block_size": 8,
                             "entry_size": 80, "num_sources": 3}),
    ShapeCase("one_layer_576", {"num_layers": 1, "num_blocks": 4, "block_size": 16,
                                "entry_size": 576, "num_sources": 1}),
    ShapeCase("three_layers", {"num_layers": 3, "num_blocks": 12, "block_size": 4,
                               "entry_size": 100, "num_sources": 4}),
    ShapeCase("heldout_mix", {"num_layers": 2, "num_blocks": 10, "block_size": 8,
                              "entry_size": 72, "num_sources": 3}, heldout=True),
    ShapeCase("deepseek_61_layers", {"num_layers": 61, "num_blocks": 64, "block_size": 64,
                                     "entry_size": 576, "num_sources": 16}, tier=LARGE),
)

SWAP_CASES = (
    ShapeCase("small_pool", {"src_blocks": 6, "dst_blocks": 9, "block_size": 8, "num_heads": 2,
                             "head_size": 16, "num_swaps": 4}),
    ShapeCase("one_block", {"src_blocks": 3, "dst_blocks": 2, "block_size": 16, "num_heads": 3,
                            "head_size": 32, "num_swaps": 1}),
    ShapeCase("every_block", {"src_blocks": 7, "dst_blocks": 7, "block_size": 4,
                              "num_heads": 1, "head_size": 40, "num_swaps": 7}),
    ShapeCase("heldout_mix", {"src_blocks": 8, "dst_blocks": 5, "block_size": 8,
                              "num_heads": 5, "head_size": 8, "num_swaps": 3}, heldout=True),
    ShapeCase("llama_swap_in", {"src_blocks": 4096, "dst_blocks": 2048, "block_size": 16,
                                "num_heads": 8, "head_size": 128, "num_swaps": 512}, tier=LARGE),
)

CP_GATHER_CASES = (
    ShapeCase("three_requests", {"seq_lens": (5, 17, 1), "block_size": 8, "num_blocks": 12,
                                 "entry_shape": (2, 16), "spare_rows": 3}),
    ShapeCase("with_starts", {"seq_lens": (9, 20), "block_size": 16, "num_blocks": 10,
                              "entry_shape": (40,), "spare_rows": 2, "with_starts": True}),
    ShapeCase("mla_entries", {"seq_lens": (12, 3), "block_size": 8, "num_blocks": 6,
                              "entry_shape": (576,), "spare_rows": 1}),
    ShapeCase("one_request", {"seq_lens": (33,), "block_size": 16, "num_blocks": 5,
                              "entry_shape": (3, 8), "spare_rows": 0, "with_starts": True}),
    ShapeCase("heldout_mix", {"seq_lens": (7, 2, 11, 4), "block_size": 4, "num_blocks": 20,
                              "entry_shape": (24,), "spare_rows": 2, "with_starts": True},
              heldout=True),
    ShapeCase("deepseek_context", {"seq_lens": (4096, 1000, 2500, 77, 3000, 1, 512, 2048),
                                   "block_size": 64, "num_blocks": 512, "entry_shape": (576,),
                                   "spare_rows": 64, "with_starts": True}, tier=LARGE),
)

GATHER_DEQUANT_CASES = (
    ShapeCase("three_requests", {"seq_lens": (5, 9, 1), "block_size": 8, "num_blocks": 8,
                                 "spare_rows": 3}),
    ShapeCase("with_starts", {"seq_lens": (6, 11), "block_size": 16, "num_blocks": 6,
                              "spare_rows": 2, "with_starts": True}),
    ShapeCase("one_request", {"seq_lens": (13,), "block_size": 4, "num_blocks": 10,
                              "spare_rows": 0, "with_starts": True}),
    ShapeCase("heldout_mix", {"seq_lens": (3, 7, 2), "block_size": 4, "num_blocks": 12,
                              "spare_rows": 2, "with_starts": True}, heldout=True),
    ShapeCase("deepseek_context", {"seq_lens": (4096, 1000, 2500, 77, 3000, 1, 512, 2048),
                                   "block_size": 64, "num_blocks": 512, "spare_rows": 64,
                                   "with_starts": True}, tier=LARGE),
)


INDEXER_CASES = (
    ShapeCase("three_requests", {"seq_lens": (5, 17, 1), "block_size": 8, "num_blocks": 12,
                                 "head_dim": 128}),
    ShapeCase("one_request", {"seq_lens": (33,), "block_size": 16, "num_blocks": 4,
                              "head_dim": 128}),
    ShapeCase("two_scales", {"seq_lens": (9, 4), "block_size": 4, "num_blocks": 8,
                             "head_dim": 256}),
    ShapeCase("heldout_mix", {"seq_lens": (7, 2, 11, 4), "block_size": 4, "num_blocks": 20,
                              "head_dim": 128}, heldout=True),
    ShapeCase("deepseek_v32_prefill", {"seq_lens": (4096, 1000, 2500, 77, 3000, 1, 512, 2048),
                                       "block_size": 64, "num_blocks": 512, "head_dim": 128},
              tier=LARGE),
)

def _tokens_bytes(p: Mapping[str, Any], size: int) -> float:
    # Read key and value, write both into the caches, read the slot mapping.
    return 4 * p["num_tokens"] * p["num_heads"] * p["head_size"] * size + 8 * p["num_tokens"]


def _copied_tokens(p: Mapping[str, Any]) -> int:
    return sum(p["seq_lens"])


_WRITE_RULES = (
    "slot_mapping (int64 [num_tokens]) gives each token's cache slot; num_tokens is "
    "slot_mapping's length, and the key/value rows past it (CUDA-graph padding in vLLM V1) are "
    "not tokens and must be ignored. slot = block * block_size "
    "+ offset within the block; slots are distinct, and a slot of -1 marks a padding token "
    "whose values must not be written anywhere. Every cache entry no token maps to must keep "
    "its value (the caches are compared whole). kv_cache_dtype is 'auto': the caches have the "
    "activations' dtype (float32, float16 or bfloat16) and values are stored unchanged (exact "
    "match required); k_scale and v_scale (float32 scalars, 1.0) are unused for 'auto'. "
    "The key and value tensors, slot_mapping and the scales must not be modified.")


def operators() -> list[OperatorSpec]:
    return [
        vllm_op(
            "reshape_and_cache",
            signature="kernel(key: Tensor, value: Tensor, key_cache: Tensor, value_cache: Tensor, "
                      "slot_mapping: Tensor, kv_cache_dtype: str, k_scale: Tensor, "
                      "v_scale: Tensor) -> None",
            description="vLLM's reshape_and_cache: writes each token's key and value "
                        "([num_tokens, num_heads, head_size], possibly with a token stride "
                        "larger than num_heads*head_size: use key.stride(0) and "
                        "value.stride(0)) into vLLM's paged KV cache, in place. Layouts: "
                        "key_cache [num_blocks, num_heads, head_size // x, block_size, x] with "
                        "x = 16 // element_size (4 for float32, 8 for float16/bfloat16), so "
                        "key element d of head h of the token in slot (block, offset) goes to "
                        "key_cache[block, h, d // x, offset, d % x]; value_cache [num_blocks, "
                        "num_heads, head_size, block_size], element d to value_cache[block, h, "
                        "d, offset]. " + _WRITE_RULES + " Returns None.",
            reference=_reshape_and_cache_reference,
            make_inputs=_paged_cache_inputs,
            cases=_paged_cases(),
            flops=lambda p: 0.0,
            bytes_moved=_tokens_bytes,
            tags=("kv_cache", "inplace"),
            mutated_args=(2, 3),
            tolerances=EXACT,
            vllm_callable="vllm._custom_ops.reshape_and_cache",
        ),
        vllm_op(
            "reshape_and_cache_flash",
            signature="kernel(key: Tensor, value: Tensor, key_cache: Tensor, value_cache: Tensor, "
                      "slot_mapping: Tensor, kv_cache_dtype: str, k_scale: Tensor, "
                      "v_scale: Tensor) -> None",
            description="vLLM's reshape_and_cache_flash: writes each token's key and value "
                        "([num_tokens, num_heads, head_size]) into the flash-attention KV "
                        "cache layout, in place: key_cache and value_cache are indexed "
                        "[num_blocks, block_size, num_heads, head_size], the token in slot "
                        "(block, offset) going to key_cache[block, offset] and "
                        "value_cache[block, offset]. The caches may be strided views (e.g. "
                        "key_cache = kv[:, 0] and value_cache = kv[:, 1] of one [num_blocks, 2, "
                        "block_size, num_heads, head_size] tensor, FlashInfer's layout): "
                        "address them through their strides. " + _WRITE_RULES
                        + " Returns None.",
            reference=_reshape_and_cache_flash_reference,
            make_inputs=_flash_cache_inputs,
            cases=FLASH_CASES,
            flops=lambda p: 0.0,
            bytes_moved=_tokens_bytes,
            tags=("kv_cache", "inplace"),
            mutated_args=(2, 3),
            tolerances=EXACT,
            vllm_callable="vllm._custom_ops.reshape_and_cache_flash",
        ),
        vllm_op(
            "concat_and_cache_mla",
            signature="kernel(kv_c: Tensor, k_pe: Tensor, kv_cache: Tensor, slot_mapping: Tensor, "
                      "kv_cache_dtype: str, scale: Tensor) -> None",
            description="vLLM's concat_and_cache_mla (DeepSeek MLA): for each token, writes the "
                        "concatenation [kv_c | k_pe] of its latent kv_c ([num_tokens, "
                        "kv_lora_rank]) and rotary key part k_pe ([num_tokens, rope_dim]; both may have "
                        "more rows than slot_mapping, whose length is num_tokens: the extra "
                        "rows are CUDA-graph padding and are ignored) into "
                        "kv_cache [num_blocks, block_size, kv_lora_rank + rope_dim] at its slot: "
                        "kv_cache[block, offset, :kv_lora_rank] = kv_c[t], kv_cache[block, "
                        "offset, kv_lora_rank:] = k_pe[t], in place. kv_c and k_pe may be "
                        "column slices of one tensor (row stride larger than their width: use "
                        "their strides). slot_mapping (int64 [num_tokens]) holds distinct slots "
                        "(block * block_size + offset) and -1 for padding tokens, which are not "
                        "written. Every other cache entry must keep its value. kv_cache_dtype "
                        "is 'auto': the cache has the inputs' dtype and values are stored "
                        "unchanged (exact match); scale (float32 scalar) is unused. kv_c, k_pe, "
                        "slot_mapping and scale must not be modified. Returns None.",
            reference=_concat_and_cache_mla_reference,
            make_inputs=_mla_cache_inputs,
            cases=MLA_CASES,
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: (2 * p["num_tokens"] * (p["kv_lora_rank"] + p["rope_dim"])
                                         * size + 8 * p["num_tokens"]),
            tags=("kv_cache", "inplace"),
            mutated_args=(2,),
            tolerances=EXACT,
            vllm_callable="vllm._custom_ops.concat_and_cache_mla",
        ),
        vllm_op(
            "copy_blocks",
            signature="kernel(key_caches: list[Tensor], value_caches: list[Tensor], "
                      "block_mapping: Tensor) -> None",
            description="vLLM's copy_blocks (torch.ops._C_cache_ops.copy_blocks): for every "
                        "layer l and every row (src, dst) of block_mapping (int64 [num_pairs, "
                        "2]), copies block src of key_caches[l] and of value_caches[l] onto "
                        "block dst of the same tensor, in place. The caches are lists (one "
                        "tensor a layer) in the paged layout, key [num_blocks, num_heads, "
                        "head_size // x, block_size, x] and value [num_blocks, num_heads, "
                        "head_size, block_size], all of one dtype (float32, float16 or "
                        "bfloat16); a block is cache[b], copied whole and bit for bit. No block "
                        "is both a source and a destination; a source may be copied to several "
                        "destinations. Blocks not named as a destination keep their values. "
                        "block_mapping must not be modified. Returns None.",
            reference=_copy_blocks_reference,
            make_inputs=_copy_blocks_inputs,
            cases=COPY_CASES,
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: (4 * p["num_layers"] * 2 * p["num_sources"]
                                         * p["num_heads"] * p["head_size"] * p["block_size"]
                                         * size),
            tags=("kv_cache", "inplace"),
            mutated_args=(0, 1),
            tolerances=EXACT,
            vllm_callable="torch.ops._C_cache_ops.copy_blocks",
        ),
        vllm_op(
            "copy_blocks_mla",
            signature="kernel(kv_caches: list[Tensor], block_mapping: Tensor) -> None",
            description="vLLM's copy_blocks_mla (torch.ops._C_cache_ops.copy_blocks_mla): for "
                        "every layer's MLA cache kv_caches[l] ([num_blocks, block_size, "
                        "entry_size], e.g. entry 576 = 512 latent + 64 rope) and every row "
                        "(src, dst) of block_mapping (int64 [num_pairs, 2]), copies block src "
                        "onto block dst, in place, bit for bit. No block is both a source and a "
                        "destination; a source may be copied to several destinations. Blocks "
                        "not named as a destination keep their values; block_mapping must not "
                        "be modified. Returns None.",
            reference=_copy_blocks_mla_reference,
            make_inputs=_copy_blocks_mla_inputs,
            cases=COPY_MLA_CASES,
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: (2 * p["num_layers"] * 2 * p["num_sources"]
                                         * p["block_size"] * p["entry_size"] * size),
            tags=("kv_cache", "inplace"),
            mutated_args=(0,),
            tolerances=EXACT,
            vllm_callable="torch.ops._C_cache_ops.copy_blocks_mla",
        ),
        vllm_op(
            "swap_blocks",
            signature="kernel(src: Tensor, dst: Tensor, block_mapping: Tensor) -> None",
            description="vLLM's swap_blocks (torch.ops._C_cache_ops.swap_blocks): for every row "
                        "(s, d) of block_mapping (int64 [num_swaps, 2]), copies block s of src "
                        "onto block d of dst, in place, bit for bit; a block is src[s], "
                        "everything after the first dim ([num_blocks, block_size, num_heads, "
                        "head_size] here; src and dst may have different num_blocks). vLLM "
                        "swaps between CPU and GPU memory with the mapping on the CPU; kgb "
                        "checks the same-device case, every tensor on the device. Destinations "
                        "are distinct; dst blocks not named keep their values; src and "
                        "block_mapping must not be modified. Returns None.",
            reference=_swap_blocks_reference,
            make_inputs=_swap_blocks_inputs,
            cases=SWAP_CASES,
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: (2 * p["num_swaps"] * p["block_size"] * p["num_heads"]
                                         * p["head_size"] * size),
            tags=("kv_cache", "inplace"),
            mutated_args=(1,),
            tolerances=EXACT,
            vllm_callable="torch.ops._C_cache_ops.swap_blocks",
        ),
        vllm_op(
            "cp_gather_cache",
            signature="kernel(src_cache: Tensor, dst: Tensor, block_table: Tensor, "
                      "cu_seq_lens: Tensor, batch_size: int, seq_starts: Tensor | None) -> None",
            description="vLLM's cp_gather_cache: gathers each request's cached tokens into a "
                        "contiguous buffer, in place. src_cache [num_blocks, block_size, "
                        "*entry] (entry = trailing dims, e.g. (576,) or (num_heads, head_size)); "
                        "dst [total_rows, *entry], same dtype; block_table int32 [batch, "
                        "max_blocks] (request b's cache blocks in order); cu_seq_lens int32 "
                        "[batch + 1]; seq_starts int32 [batch] or None (treated as zeros). For "
                        "each request b < batch_size and i < cu_seq_lens[b+1] - cu_seq_lens[b], "
                        "with pos = seq_starts[b] + i (not necessarily block-aligned): "
                        "dst[cu_seq_lens[b] + i] = src_cache[block_table[b, pos // block_size], "
                        "pos % block_size], copied bit for bit. dst rows past "
                        "cu_seq_lens[batch_size] must keep their values; the other arguments "
                        "must not be modified. Returns None.",
            reference=_cp_gather_cache_reference,
            make_inputs=_cp_gather_inputs,
            cases=CP_GATHER_CASES,
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: (2 * _copied_tokens(p) * _entry(p) * size),
            tags=("kv_cache", "out_param"),
            mutated_args=(1,),
            tolerances=EXACT,
            vllm_callable="vllm._custom_ops.cp_gather_cache",
        ),
        vllm_op(
            "gather_and_maybe_dequant_cache",
            signature="kernel(src_cache: Tensor, dst: Tensor, block_table: Tensor, "
                      "cu_seq_lens: Tensor, token_to_seq: Tensor, num_tokens: int, "
                      "kv_cache_dtype: str, scale: Tensor, seq_starts: Tensor | None) -> None",
            description="vLLM's gather_and_maybe_dequant_cache (MLA chunked-prefill context "
                        "gather), in place: src_cache [num_blocks, block_size, 576] (vLLM only "
                        "supports entries of 576 = 512 latent + 64 rope), dst [max_tokens, 576]; "
                        "block_table int32 [batch, max_blocks]; cu_seq_lens int32 [batch + 1]; "
                        "token_to_seq int32 [max_tokens] (the request of each dst token; only "
                        "the first num_tokens are meaningful); seq_starts int32 [batch] or None "
                        "(zeros). For every token t < num_tokens, with b = token_to_seq[t] and "
                        "pos = t - cu_seq_lens[b] + seq_starts[b]: dst[t] = src_cache["
                        "block_table[b, pos // block_size], pos % block_size]. kv_cache_dtype "
                        "is 'auto': dst has the cache's dtype and values are copied unchanged "
                        "(exact match); scale (float32 scalar) is unused. dst rows t >= "
                        "num_tokens must keep their values; the other arguments must not be "
                        "modified. Returns None.",
            reference=_gather_and_maybe_dequant_cache_reference,
            make_inputs=_gather_dequant_inputs,
            cases=GATHER_DEQUANT_CASES,
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: 2 * _copied_tokens(p) * 576 * size,
            tags=("kv_cache", "out_param"),
            mutated_args=(1,),
            tolerances=EXACT,
            vllm_callable="vllm._custom_ops.gather_and_maybe_dequant_cache",
        ),
        vllm_op(
            "cp_gather_indexer_k_quant_cache",
            signature="kernel(kv_cache: Tensor, dst_k: Tensor, dst_scale: Tensor, "
                      "block_table: Tensor, cu_seq_lens: Tensor) -> None",
            description="vLLM's cp_gather_indexer_k_quant_cache (DeepSeek V3.2 sparse-attention "
                        "indexer): gathers each request's fp8-quantised indexer keys and their "
                        "float32 scales out of the paged indexer cache, as raw bytes, in place. "
                        "kv_cache is uint8 [num_blocks, block_size, head_dim + scale_bytes] "
                        "with scale_bytes = head_dim / 128 * 4 (one float32 scale per 128 "
                        "values), but its layout is per block, not per token: block b's bytes "
                        "(kv_cache[b] flattened) hold first block_size * head_dim key bytes, "
                        "token-major (token o's at [o * head_dim, (o + 1) * head_dim)), then "
                        "block_size * scale_bytes scale bytes (token o's at [block_size * "
                        "head_dim + o * scale_bytes, + scale_bytes)). dst_k [num_tokens, "
                        "head_dim] and dst_scale [num_tokens, scale_bytes] are uint8 (vLLM "
                        "passes dst_k as float8_e4m3fn; kgb checks the same bytes as uint8); "
                        "block_table int32 [batch, max_blocks]; cu_seq_lens int32 [batch + 1] "
                        "with num_tokens = cu_seq_lens[batch]. dst row t of request b "
                        "(cu_seq_lens[b] <= t < cu_seq_lens[b+1]), position i = t - "
                        "cu_seq_lens[b], takes token i % block_size of block block_table[b, i "
                        "// block_size]. Bytes copied exactly; kv_cache, block_table and "
                        "cu_seq_lens must not be modified. Returns None.",
            reference=_cp_gather_indexer_k_quant_cache_reference,
            make_inputs=_indexer_inputs,
            cases=INDEXER_CASES,
            dtypes=("uint8",),
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: 2 * _copied_tokens(p) * (p["head_dim"] * 33 // 32),
            tags=("kv_cache", "out_param"),
            mutated_args=(1, 2),
            vllm_callable="vllm._custom_ops.cp_gather_indexer_k_quant_cache",
        ),
    ]


def _entry(p: Mapping[str, Any]) -> int:
    size = 1
    for dim in p["entry_shape"]:
        size *= dim
    return size
