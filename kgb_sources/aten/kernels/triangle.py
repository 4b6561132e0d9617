# __NAME__(x, diagonal): x's last two dims as (rows, cols) matrices, batch dims in front; an
# element (i, j) is kept when __KEEP__, else it is 0. diagonal = 0 is the main diagonal, > 0
# above it, < 0 below. x is read with its own strides; rank 2..4 (padded with size-1 batch dims).
import torch
import triton
import triton.language as tl

MAX_RANK = 4
BLOCK = 1024


@triton.jit
def _triangle_kernel(x_ptr, out_ptr, n_elements, diagonal, size1, rows, cols,
                     x_s0, x_s1, x_s2, x_s3, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64 offsets: large tensors pass 2**31 elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    j = offsets % cols
    rest = offsets // cols
    i = rest % rows
    rest = rest // rows
    b1 = rest % size1
    b0 = rest // size1
    keep = __KEEP__
    x = tl.load(x_ptr + b0 * x_s0 + b1 * x_s1 + i * x_s2 + j * x_s3, mask=mask & keep,
                other=0.0)
    tl.store(out_ptr + offsets, tl.where(keep, x, 0.0).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, diagonal: int = 0) -> torch.Tensor:
    if not 2 <= x.dim() <= MAX_RANK:
        raise ValueError(f"this kernel takes tensors of rank 2..{MAX_RANK}, got {x.dim()}")
    lead = MAX_RANK - x.dim()
    sizes = [1] * lead + list(x.shape)
    strides = [0] * lead + list(x.stride())
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n_elements = out.numel()
    if n_elements:
        _triangle_kernel[(triton.cdiv(n_elements, BLOCK),)](
            x, out, n_elements, diagonal, sizes[1], sizes[2], sizes[3], *strides, BLOCK=BLOCK)
    return out
