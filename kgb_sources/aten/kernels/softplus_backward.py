# softplus_backward(grad_output, x, beta, threshold) as ATen defines it: grad_output where
# beta*x > threshold, else grad_output * z / (z + 1) with z = exp(beta*x), i.e.
# grad_output * sigmoid(beta*x).
import torch
import triton
import triton.language as tl


@triton.jit
def _softplus_backward_kernel(g_ptr, x_ptr, out_ptr, n_elements, beta, threshold,
                              BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    g = tl.load(g_ptr + offsets, mask=mask).to(tl.float32)
    bx = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) * beta
    y = tl.where(bx > threshold, g, g * tl.sigmoid(bx))
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(grad_output: torch.Tensor, x: torch.Tensor, beta: float,
           threshold: float) -> torch.Tensor:
    grad_output = grad_output.contiguous()
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements:
        block = 1024
        _softplus_backward_kernel[(triton.cdiv(n_elements, block),)](
            grad_output, x, out, n_elements, float(beta), float(threshold), BLOCK=block)
    return out
