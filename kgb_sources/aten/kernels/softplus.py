# softplus(x, beta, threshold) as ATen defines it: x where beta*x > threshold, else
# log1p(exp(beta*x)) / beta. log1p(e) is Goldberg's log(u) * e / (u - 1), u = 1 + e, which is
# accurate for small e (tl has no log1p).
import torch
import triton
import triton.language as tl


@triton.jit
def _softplus_kernel(x_ptr, out_ptr, n_elements, beta, threshold, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    bx = x * beta
    e = tl.exp(bx)
    u = 1.0 + e
    log1p = tl.where(u == 1.0, e, tl.log(u) * e / (u - 1.0))
    y = tl.where(bx > threshold, x, log1p / beta)
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, beta: float = 1.0, threshold: float = 20.0) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements:
        block = 1024
        _softplus_kernel[(triton.cdiv(n_elements, block),)](x, out, n_elements, float(beta),
                                                            float(threshold), BLOCK=block)
    return out
