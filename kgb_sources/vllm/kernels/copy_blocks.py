# vLLM's copy_blocks: for every layer and every (src, dst) row of block_mapping, block dst of
# the key and the value cache becomes a copy of block src. Blocks are contiguous runs of
# numel_per_block elements (cache[0].numel()), as in vLLM. One launch per layer; a program
# copies one chunk of one pair's block in both caches.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_blocks_kernel(key_ptr, value_ptr, mapping_ptr, key_block_stride, value_block_stride,
                        numel_per_block, BLOCK: tl.constexpr):
    pair = tl.program_id(0).to(tl.int64)
    src = tl.load(mapping_ptr + 2 * pair)
    dst = tl.load(mapping_ptr + 2 * pair + 1)
    idx = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < numel_per_block
    k = tl.load(key_ptr + src * key_block_stride + idx, mask=mask)
    tl.store(key_ptr + dst * key_block_stride + idx, k, mask=mask)
    v = tl.load(value_ptr + src * value_block_stride + idx, mask=mask)
    tl.store(value_ptr + dst * value_block_stride + idx, v, mask=mask)


def kernel(key_caches, value_caches, block_mapping):
    num_pairs = block_mapping.shape[0]
    if num_pairs == 0 or len(key_caches) == 0:
        return None
    mapping = block_mapping.contiguous()
    for key_cache, value_cache in zip(key_caches, value_caches):
        numel_per_block = key_cache[0].numel()
        assert value_cache[0].numel() == numel_per_block
        block = min(triton.next_power_of_2(numel_per_block), 4096 if key_cache.is_cuda else 1024)
        grid = (num_pairs, triton.cdiv(numel_per_block, block))
        _copy_blocks_kernel[grid](key_cache, value_cache, mapping, key_cache.stride(0),
                                  value_cache.stride(0), numel_per_block, BLOCK=block)
    return None
