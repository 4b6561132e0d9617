"""Argmax over a dimension given at call time: the input is seen as (outer, reduced, inner);
each program scans the reduced dimension for a tile of inner columns, keeping the first index
of the largest value (as torch.argmax does on ties)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _argmax_middle(x_ptr, out_ptr, n_reduced, n_inner,
                   BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    outer = tl.program_id(0).to(tl.int64)
    inner = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    reduced = tl.arange(0, BLOCK_R)
    base = x_ptr + outer * n_reduced * n_inner
    best = tl.full([BLOCK_I], float("-inf"), tl.float32)
    best_index = tl.zeros([BLOCK_I], tl.int64)
    for start in range(0, n_reduced, BLOCK_R):
        r = start + reduced
        mask = (r[:, None] < n_reduced) & (inner[None, :] < n_inner)
        tile = tl.load(base + r[:, None] * n_inner + inner[None, :], mask=mask,
                       other=float("-inf")).to(tl.float32)
        tile_max = tl.max(tile, axis=0)
        candidates = tl.where(mask & (tile == tile_max[None, :]), r[:, None], n_reduced)
        tile_index = tl.min(candidates, axis=0).to(tl.int64)
        better = tile_max > best  # strictly: an earlier index wins a tie
        best_index = tl.where(better, tile_index, best_index)
        best = tl.where(better, tile_max, best)
    tl.store(out_ptr + outer * n_inner + inner, best_index, mask=inner < n_inner)


def kernel(x, dim):
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
    out = torch.empty(shape[:dim] + shape[dim + 1:], dtype=torch.int64, device=x.device)
    BLOCK_I = min(128, triton.next_power_of_2(max(n_inner, 1)))
    BLOCK_R = 32
    grid = (max(n_outer, 1), max(triton.cdiv(n_inner, BLOCK_I), 1))
    _argmax_middle[grid](x, out, n_reduced, n_inner, BLOCK_R=BLOCK_R, BLOCK_I=BLOCK_I)
    return out
