# leaky_relu(x, negative_slope=0.01): x for x > 0, else x * negative_slope.
import torch
import triton
import triton.language as tl


@triton.jit
def _leaky_relu_kernel(x_ptr, out_ptr, n_elements, negative_slope, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.where(x > 0, x, x * negative_slope)
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements:
        block = 1024
        _leaky_relu_kernel[(triton.cdiv(n_elements, block),)](x, out, n_elements,
                                                              float(negative_slope),
                                                              BLOCK=block)
    return out
