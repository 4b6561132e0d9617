# vLLM's swap_blocks on one device: dst[d] = src[s] for every (s, d) row of block_mapping, a
# block being everything after the first dim (contiguous). One program per pair and chunk.
import torch
import triton
import triton.language as tl


@triton.jit
def _swap_blocks_kernel(src_ptr, dst_ptr, mapping_ptr, src_block_stride, dst_block_stride,
                        numel_per_block, BLOCK: tl.constexpr):
    pair = tl.program_id(0).to(tl.int64)
    src = tl.load(mapping_ptr + 2 * pair)
    dst = tl.load(mapping_ptr + 2 * pair + 1)
    idx = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < numel_per_block
    values = tl.load(src_ptr + src * src_block_stride + idx, mask=mask)
    tl.store(dst_ptr + dst * dst_block_stride + idx, values, mask=mask)


def kernel(src, dst, block_mapping):
    num_pairs = block_mapping.shape[0]
    if num_pairs == 0:
        return None
    numel_per_block = src[0].numel()
    block = min(triton.next_power_of_2(numel_per_block), 4096 if src.is_cuda else 1024)
    grid = (num_pairs, triton.cdiv(numel_per_block, block))
    _swap_blocks_kernel[grid](src, dst, block_mapping.contiguous(), src.stride(0), dst.stride(0),
                              numel_per_block, BLOCK=block)
    return None
