# vLLM's cp_gather_indexer_k_quant_cache: byte gather of fp8 indexer keys and their float32
# scales. A cache block is one byte buffer: block_size * head_dim key bytes (token-major),
# then block_size * scale_bytes scale bytes. Each program takes TOK dst tokens, finds each
# token's request by counting the cu_seq_lens boundaries at or below it, and copies the key
# row and the scale bytes of its cache slot.
import torch
import triton
import triton.language as tl


@triton.jit
def _indexer_gather_kernel(cache_ptr, dst_k_ptr, dst_scale_ptr, table_ptr, cu_ptr, num_tokens,
                           batch, table_stride, cache_block, dst_k_row, dst_scale_row,
                           head_dim, scale_bytes, block_size, TOK: tl.constexpr,
                           BP: tl.constexpr, HP: tl.constexpr, SP: tl.constexpr):
    t = tl.program_id(0).to(tl.int64) * TOK + tl.arange(0, TOK)
    live = t < num_tokens
    r = tl.arange(0, BP)
    ends = tl.load(cu_ptr + 1 + r, mask=r < batch, other=0).to(tl.int64)
    # Request of t: how many requests end at or before t (ends are cu_seq_lens[1:]).
    b = tl.sum(((ends[None, :] <= t[:, None]) & (r < batch)[None, :]).to(tl.int64), axis=1)
    b = tl.where(live, b, 0)
    start = tl.load(cu_ptr + b, mask=live, other=0).to(tl.int64)
    i = tl.where(live, t - start, 0)
    block = tl.load(table_ptr + b * table_stride + i // block_size, mask=live,
                    other=0).to(tl.int64)
    offset = i % block_size
    base = block * cache_block
    h = tl.arange(0, HP)
    k_mask = live[:, None] & (h < head_dim)[None, :]
    k = tl.load(cache_ptr + base[:, None] + offset[:, None] * head_dim + h[None, :], mask=k_mask)
    tl.store(dst_k_ptr + t[:, None] * dst_k_row + h[None, :], k, mask=k_mask)
    s = tl.arange(0, SP)
    s_mask = live[:, None] & (s < scale_bytes)[None, :]
    scales = tl.load(cache_ptr + base[:, None] + block_size * head_dim
                     + offset[:, None] * scale_bytes + s[None, :], mask=s_mask)
    tl.store(dst_scale_ptr + t[:, None] * dst_scale_row + s[None, :], scales, mask=s_mask)


def kernel(kv_cache, dst_k, dst_scale, block_table, cu_seq_lens):
    num_tokens, head_dim = dst_k.shape
    scale_bytes = dst_scale.shape[1]
    batch = block_table.shape[0]
    if num_tokens == 0:
        return None
    assert kv_cache[0].is_contiguous() and dst_k.stride(1) == 1 and dst_scale.stride(1) == 1
    hp = triton.next_power_of_2(head_dim)
    tok = max(1, min((4096 if dst_k.is_cuda else 1024) // hp, triton.next_power_of_2(num_tokens)))
    grid = (triton.cdiv(num_tokens, tok),)
    _indexer_gather_kernel[grid](
        kv_cache, dst_k, dst_scale, block_table, cu_seq_lens, num_tokens, batch,
        block_table.stride(0), kv_cache.stride(0), dst_k.stride(0), dst_scale.stride(0),
        head_dim, scale_bytes, kv_cache.shape[1], TOK=tok, BP=triton.next_power_of_2(batch),
        HP=hp, SP=triton.next_power_of_2(scale_bytes))
    return None
