"""Swish, x * sigmoid(x) = x / (1 + exp(-x)), computed in fp32."""
import torch
import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = x / (1.0 + tl.exp(-x))
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    _swish_kernel[(max(triton.cdiv(n, BLOCK), 1),)](x, out, n, BLOCK=BLOCK)
    return out
