# vLLM's copy_blocks_mla: for every layer's MLA cache and every (src, dst) row of
# block_mapping, block dst becomes a copy of block src (a block is cache[b], contiguous).
# One launch per layer; a program copies one chunk of one pair's block.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_blocks_mla_kernel(cache_ptr, mapping_ptr, block_stride, numel_per_block,
                            BLOCK: tl.constexpr):
    pair = tl.program_id(0).to(tl.int64)
    src = tl.load(mapping_ptr + 2 * pair)
    dst = tl.load(mapping_ptr + 2 * pair + 1)
    idx = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < numel_per_block
    values = tl.load(cache_ptr + src * block_stride + idx, mask=mask)
    tl.store(cache_ptr + dst * block_stride + idx, values, mask=mask)


def kernel(kv_caches, block_mapping):
    num_pairs = block_mapping.shape[0]
    if num_pairs == 0:
        return None
    mapping = block_mapping.contiguous()
    for cache in kv_caches:
        numel_per_block = cache[0].numel()
        block = min(triton.next_power_of_2(numel_per_block), 4096 if cache.is_cuda else 1024)
        grid = (num_pairs, triton.cdiv(numel_per_block, block))
        _copy_blocks_mla_kernel[grid](cache, mapping, cache.stride(0), numel_per_block,
                                      BLOCK=block)
    return None
