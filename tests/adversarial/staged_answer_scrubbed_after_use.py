# op: aten.t
# expect: reference_used
# The staged answer is copied into the output by a Triton kernel, then a second kernel zeroes
# the staging buffer before the call returns, so that nothing left at the end holds the answer
# but the output: the runner keeps each rearranging copy as it was made, not as it ends.
import torch
import triton
import triton.language as tl


@triton.jit
def _move(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)
    tl.store(src + offsets, tl.zeros([BLOCK], dtype=src.dtype.element_ty), mask=mask)


def kernel(x):
    staged = x.t().contiguous()
    out = torch.empty_like(staged)
    _move[(triton.cdiv(staged.numel(), 1024),)](staged, out, staged.numel(), BLOCK=1024)
    return out
