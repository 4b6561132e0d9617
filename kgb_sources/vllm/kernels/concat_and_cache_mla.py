# vLLM's concat_and_cache_mla: kv_cache[block, offset] = [kv_c[t] | k_pe[t]] for each token's
# slot; a slot of -1 (padding token) is skipped. A program takes TOK tokens x BLOCK entries.
import torch
import triton
import triton.language as tl


@triton.jit
def _concat_and_cache_mla_kernel(kv_c_ptr, k_pe_ptr, cache_ptr, slot_ptr, num_tokens,
                                 kv_c_stride, k_pe_stride, cache_block, cache_entry, num_slots,
                                 rank, rope, block_size, TOK: tl.constexpr,
                                 BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64) * TOK + tl.arange(0, TOK)
    slot = tl.load(slot_ptr + token, mask=token < num_tokens, other=-1)
    valid = (slot >= 0) & (slot < num_slots)
    safe = tl.where(valid, slot, 0)
    base = ((safe // block_size) * cache_block + (safe % block_size) * cache_entry)[:, None]
    idx = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK))[None, :]
    from_c = valid[:, None] & (idx < rank)
    from_pe = valid[:, None] & (idx >= rank) & (idx < rank + rope)
    c = tl.load(kv_c_ptr + token[:, None] * kv_c_stride + idx, mask=from_c)
    pe = tl.load(k_pe_ptr + token[:, None] * k_pe_stride + (idx - rank), mask=from_pe)
    tl.store(cache_ptr + base + idx, tl.where(from_c, c, pe), mask=from_c | from_pe)


def kernel(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale):
    # slot_mapping's length is the token count: kv_c may have more rows (CUDA-graph
    # padding in vLLM V1), which are not written.
    num_tokens = slot_mapping.shape[0]
    rank = kv_c.shape[1]
    rope = k_pe.shape[1]
    num_blocks, block_size, entry = kv_cache.shape
    if num_tokens == 0:
        return None
    assert kv_c.stride(1) == 1 and k_pe.stride(1) == 1 and kv_cache.stride(2) == 1
    limit = 4096 if kv_c.is_cuda else 1024
    block = min(triton.next_power_of_2(entry), limit)
    tok = max(1, min(limit // block, triton.next_power_of_2(num_tokens)))
    grid = (triton.cdiv(num_tokens, tok), triton.cdiv(entry, block))
    _concat_and_cache_mla_kernel[grid](
        kv_c, k_pe, kv_cache, slot_mapping.contiguous(), num_tokens, kv_c.stride(0),
        k_pe.stride(0), kv_cache.stride(0), kv_cache.stride(1), num_blocks * block_size, rank,
        rope, block_size, TOK=tok, BLOCK=block)
    return None
