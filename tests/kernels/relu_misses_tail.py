# Wrong on purpose: the grid rounds down, so the last partial block is never written.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.full_like(x, float("nan"))
    n = x.numel()
    programs = max(1, n // 256)
    _relu[(programs,)](x, out, n, BLOCK=256)
    return out
