# Template for the unary pointwise ATen ops: __EXPR__ is an expression of `x` (fp32).
import torch
import triton
import triton.language as tl


@triton.jit
def _unary_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    # Compute in fp32 whatever the storage dtype: fp16/bf16 math loses too much otherwise.
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = __EXPR__
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements:
        block = 1024
        _unary_kernel[(triton.cdiv(n_elements, block),)](x, out, n_elements, BLOCK=block)
    return out
