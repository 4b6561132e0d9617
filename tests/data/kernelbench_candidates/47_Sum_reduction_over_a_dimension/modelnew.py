"""Sum over one dimension with keepdim: the input is seen as (outer, reduced, inner); each
program sums a tile of inner columns over the reduced dimension.
ModelNew: KernelBench's form, whose forward launches the same kernels."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_middle(x_ptr, out_ptr, n_reduced, n_inner,
                BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    outer = tl.program_id(0).to(tl.int64)
    inner = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    reduced = tl.arange(0, BLOCK_R)
    base = x_ptr + outer * n_reduced * n_inner
    acc = tl.zeros([BLOCK_I], tl.float32)
    for start in range(0, n_reduced, BLOCK_R):
        r = start + reduced
        mask = (r[:, None] < n_reduced) & (inner[None, :] < n_inner)
        tile = tl.load(base + r[:, None] * n_inner + inner[None, :], mask=mask, other=0.0)
        acc += tl.sum(tile.to(tl.float32), axis=0)
    tl.store(out_ptr + outer * n_inner + inner, acc.to(out_ptr.dtype.element_ty),
             mask=inner < n_inner)


def _launch(x, dim):
    x = x.contiguous()
    dim = dim % x.dim()
    shape = tuple(x.shape)
    n_outer = 1
    for size in shape[:dim]:
        n_outer *= size
    n_reduced = shape[dim]
    n_inner = 1
    for size in shape[dim + 1:]:
        n_inner *= size
    out = torch.empty(shape[:dim] + (1,) + shape[dim + 1:], dtype=x.dtype, device=x.device)
    BLOCK_I = min(128, triton.next_power_of_2(max(n_inner, 1)))
    BLOCK_R = 32
    grid = (max(n_outer, 1), max(triton.cdiv(n_inner, BLOCK_I), 1))
    _sum_middle[grid](x, out, n_reduced, n_inner, BLOCK_R=BLOCK_R, BLOCK_I=BLOCK_I)
    return out


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return _launch(x, self.dim)
