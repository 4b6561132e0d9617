# vLLM's reshape_and_cache_flash: each token's key/value rows go into the flash layout,
# caches indexed [num_blocks, block_size, num_heads, head_size] through their strides (so a
# cache may be a view of FlashInfer's [num_blocks, 2, block_size, heads, head_size]); a slot of
# -1 (padding token) is skipped. A program takes TOK tokens x BLOCK of heads * head_size.
import torch
import triton
import triton.language as tl


@triton.jit
def _reshape_and_cache_flash_kernel(key_ptr, value_ptr, key_cache_ptr, value_cache_ptr,
                                    slot_ptr, num_tokens, key_stride, value_stride, num_slots,
                                    kc_block, kc_offset, kc_head, vc_block, vc_offset, vc_head,
                                    n, head_size, block_size, TOK: tl.constexpr,
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
    tl.store(key_cache_ptr + block * kc_block + offset * kc_offset + head * kc_head + dim, k,
             mask=mask)
    tl.store(value_cache_ptr + block * vc_block + offset * vc_offset + head * vc_head + dim, v,
             mask=mask)


def kernel(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    # slot_mapping's length is the token count: key may have more rows (CUDA-graph
    # padding in vLLM V1), which are not written.
    num_tokens = slot_mapping.shape[0]
    num_heads, head_size = key.shape[1], key.shape[2]
    num_blocks, block_size = key_cache.shape[0], key_cache.shape[1]
    if num_tokens == 0:
        return None
    assert key.stride(2) == 1 and key.stride(1) == head_size
    assert value.stride(2) == 1 and value.stride(1) == head_size
    assert key_cache.stride(3) == 1 and value_cache.stride(3) == 1
    n = num_heads * head_size
    limit = 4096 if key.is_cuda else 1024
    block = min(triton.next_power_of_2(n), limit)
    tok = max(1, min(limit // block, triton.next_power_of_2(num_tokens)))
    grid = (triton.cdiv(num_tokens, tok), triton.cdiv(n, block))
    _reshape_and_cache_flash_kernel[grid](
        key, value, key_cache, value_cache, slot_mapping.contiguous(), num_tokens,
        key.stride(0), value.stride(0), num_blocks * block_size,
        key_cache.stride(0), key_cache.stride(1), key_cache.stride(2),
        value_cache.stride(0), value_cache.stride(1), value_cache.stride(2),
        n, head_size, block_size, TOK=tok, BLOCK=block)
    return None
