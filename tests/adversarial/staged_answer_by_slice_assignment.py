# op: aten.expand
# expect: reference_used
# The broadcast done by assigning the input to every element of a new buffer (``buf[...] = x``,
# a ``copy_`` from a smaller, expanded source), then a Triton kernel copies the buffer into the
# output. What a copy writes into its destination is kept, not only what ``clone`` returns.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x, sizes):
    shape = [size if size != -1 else x.shape[i - (len(sizes) - x.dim())]
             for i, size in enumerate(sizes)]
    buffer = torch.empty(shape, dtype=x.dtype, device=x.device)
    buffer[...] = x
    out = torch.empty_like(buffer)
    _copy[(triton.cdiv(out.numel(), 1024),)](buffer, out, out.numel(), BLOCK=1024)
    return out
