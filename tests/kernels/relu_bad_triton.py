# Uses a tl function that does not exist: fails when the kernel is first launched.
import torch
import triton
import triton.language as tl


@triton.jit
def _broken(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n)
    tl.store(out_ptr + offsets, tl.no_such_function(x), mask=offsets < n)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    _broken[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    return out
