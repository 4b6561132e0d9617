# clamp(x, min=None, max=None) with scalar bounds: max(x, min) then min(., max), either bound
# optional; NaN stays NaN (comparisons with NaN are false, so where() keeps x).
import torch
import triton
import triton.language as tl


@triton.jit
def _clamp_kernel(x_ptr, out_ptr, n_elements, lo, hi, HAS_MIN: tl.constexpr,
                  HAS_MAX: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    y = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    if HAS_MIN:
        y = tl.where(y < lo, lo, y)
    if HAS_MAX:
        y = tl.where(y > hi, hi, y)
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, min=None, max=None) -> torch.Tensor:  # scalars or None
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements:
        block = 1024
        _clamp_kernel[(triton.cdiv(n_elements, block),)](
            x, out, n_elements, float(min if min is not None else 0.0),
            float(max if max is not None else 0.0), HAS_MIN=min is not None,
            HAS_MAX=max is not None, BLOCK=block)
    return out
