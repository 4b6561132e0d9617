# Right values in the wrong dtype (always float32): the answer must be wrong_shape_or_dtype.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    n = x.numel()
    _relu[(triton.cdiv(max(n, 1), 256),)](x, out, n, BLOCK=256)
    return out
