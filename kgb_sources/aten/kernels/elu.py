# aten.elu(x, alpha, scale, input_scale): x * scale for x > 0, else
# (exp(x * input_scale) - 1) * alpha * scale.
import torch
import triton
import triton.language as tl


@triton.jit
def _elu_kernel(x_ptr, out_ptr, n_elements, alpha, scale, input_scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    negative = (tl.exp(tl.minimum(x, 0.0) * input_scale) - 1.0) * (alpha * scale)
    y = tl.where(x > 0, x * scale, negative)
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, alpha: float = 1.0, scale: float = 1.0,
           input_scale: float = 1.0) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements:
        block = 1024
        _elu_kernel[(triton.cdiv(n_elements, block),)](x, out, n_elements, float(alpha),
                                                       float(scale), float(input_scale),
                                                       BLOCK=block)
    return out
