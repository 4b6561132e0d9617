# vLLM's reshape_and_cache: each token's key/value rows go into the paged cache,
# key_cache [num_blocks, num_heads, head_size // x, block_size, x] and value_cache
# [num_blocks, num_heads, head_size, block_size]; a slot of -1 (padding token) is skipped.
# A program takes TOK tokens x BLOCK of their num_heads * head_size elements; cache addresses
# come from the caches' strides.
import torch
import triton
import triton.language as tl


@triton.jit
def _reshape_and_cache_kernel(key_ptr, value_ptr, key_cache_ptr, value_cache_ptr, slot_ptr,
                              num_tokens, key_stride, value_stride, num_slots,
                              kc_block, kc_head, kc_chunk, kc_offset,
                              vc_block, vc_head, vc_dim, vc_offset,
                              n, head_size, block_size, X: tl.constexpr, TOK: tl.constexpr,
                              BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64) * TOK + tl.arange(0, TOK)
    slot = tl.load(slot_ptr + token, mask=token < num_tokens, other=-1)
    valid = (slot >= 0) & (slot < num_slots)
    safe = tl.where(valid, slot, 0)
    block = (safe // block_size)[:, None]
    offset = (safe % block_size)[:, None]
    idx = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = valid[:, None] & (idx < n)[None, :]
    head = (idx // head_size)[None, :]
    dim = (idx % head_size)[None, :]
    k = tl.load(key_ptr + token[:, None] * key_stride + idx[None, :], mask=mask)
    v = tl.load(value_ptr + token[:, None] * value_stride + idx[None, :], mask=mask)
    k_dst = (block * kc_block + head * kc_head + (dim // X) * kc_chunk + offset * kc_offset
             + dim % X)
    v_dst = block * vc_block + head * vc_head + dim * vc_dim + offset * vc_offset
    tl.store(key_cache_ptr + k_dst, k, mask=mask)
    tl.store(value_cache_ptr + v_dst, v, mask=mask)


def kernel(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    # slot_mapping's length is the token count: key may have more rows (CUDA-graph
    # padding in vLLM V1), which are not written.
    num_tokens = slot_mapping.shape[0]
    num_heads, head_size = key.shape[1], key.shape[2]
    num_blocks, _, _, block_size, x = key_cache.shape
    if num_tokens == 0:
        return None
    # The token rows may be strided (key and value split from one buffer); heads and dims not.
    assert key.stride(2) == 1 and key.stride(1) == head_size
    assert value.stride(2) == 1 and value.stride(1) == head_size
    assert key_cache.stride(4) == 1
    n = num_heads * head_size
    limit = 4096 if key.is_cuda else 1024
    block = min(triton.next_power_of_2(n), limit)
    tok = max(1, min(limit // block, triton.next_power_of_2(num_tokens)))
    grid = (triton.cdiv(num_tokens, tok), triton.cdiv(n, block))
    _reshape_and_cache_kernel[grid](
        key, value, key_cache, value_cache, slot_mapping.contiguous(), num_tokens,
        key.stride(0), value.stride(0), num_blocks * block_size,
        key_cache.stride(0), key_cache.stride(1), key_cache.stride(2), key_cache.stride(3),
        value_cache.stride(0), value_cache.stride(1), value_cache.stride(2),
        value_cache.stride(3),
        n, head_size, block_size, X=x, TOK=tok, BLOCK=block)
    return None
