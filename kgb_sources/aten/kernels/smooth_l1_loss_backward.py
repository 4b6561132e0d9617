# smooth_l1_loss_backward(grad_output, x, target, reduction, beta) as ATen defines it: with
# d = x - target and norm = 1/numel for reduction 1 (mean), else 1: -norm*g for d <= -beta,
# norm*g for d >= beta, norm*d*g/beta between. grad_output has x's shape for reduction 0
# (none) and is 0-d for mean (1) and sum (2).
import torch
import triton
import triton.language as tl


@triton.jit
def _smooth_l1_backward_kernel(g_ptr, x_ptr, t_ptr, out_ptr, n_elements, norm, beta,
                               G_SCALAR: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    if G_SCALAR:
        g = tl.load(g_ptr).to(tl.float32)
    else:
        g = tl.load(g_ptr + offsets, mask=mask).to(tl.float32)
    d = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) - tl.load(
        t_ptr + offsets, mask=mask).to(tl.float32)
    grad = tl.where(d <= -beta, -norm * g, tl.where(d >= beta, norm * g, norm * d * g / beta))
    tl.store(out_ptr + offsets, grad.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(grad_output: torch.Tensor, x: torch.Tensor, target: torch.Tensor, reduction: int,
           beta: float) -> torch.Tensor:
    x = x.contiguous()
    target = target.contiguous()
    # One grad value (mean, sum) is read once per program; otherwise one per element.
    scalar_grad = grad_output.numel() == 1
    grad_output = grad_output.reshape(()) if scalar_grad else grad_output.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements:
        norm = 1.0 / n_elements if reduction == 1 else 1.0
        block = 1024
        _smooth_l1_backward_kernel[(triton.cdiv(n_elements, block),)](
            grad_output, x, target, out, n_elements, norm, float(beta),
            G_SCALAR=scalar_grad, BLOCK=block)
    return out
