# __NAME__: cuBLAS __OPERATION__, the 1-based index of the first element of x (x_i = x[i * incx],
# i < n) with the __EXTREME__ |x_i|, as a new 1-element int32 tensor (0 when n <= 0, as
# cuBLAS). "First" matters on ties: of equal |x_i| the smallest i wins. The search runs on a
# key, |x_i| for the largest and -|x_i| for the smallest, so both look for a maximum. Two
# launches: one program per BLOCK elements writes its best key and the first index holding
# it, then one program picks the best block, the earliest on ties.
import torch
import triton
import triton.language as tl

LARGEST = __LARGEST__


@triton.jit
def _key(x, LARGEST: tl.constexpr):
    if LARGEST:
        key = tl.abs(x)
    else:
        key = -tl.abs(x)
    return key


@triton.jit
def _best_partials(x_ptr, key_ptr, index_ptr, n, incx, LARGEST: tl.constexpr,
                   BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i * incx, mask=mask, other=0.0)
    key = tl.where(mask, _key(x, LARGEST), -float("inf"))
    best = tl.max(key, axis=0)
    first = tl.min(tl.where(mask & (key == best), i, n), axis=0)
    tl.store(key_ptr + pid, best)
    tl.store(index_ptr + pid, first)


@triton.jit
def _pick(key_ptr, index_ptr, out_ptr, count, n, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    # Lane j sees blocks j, j + BLOCK, ... in increasing order, so a strict ">" keeps its
    # earliest block among equal keys; the final min over lanes does the rest.
    best = tl.full([BLOCK], -float("inf"), dtype=key_ptr.dtype.element_ty)
    first = tl.zeros([BLOCK], dtype=tl.int64) + n
    for start in range(0, count, BLOCK):
        row = start + rows
        in_range = row < count
        key = tl.load(key_ptr + row, mask=in_range, other=-float("inf"))
        index = tl.load(index_ptr + row, mask=in_range, other=0)
        better = key > best
        first = tl.where(better, index, first)
        best = tl.where(better, key, best)
    top = tl.max(best, axis=0)
    winner = tl.min(tl.where(best == top, first, n), axis=0)
    tl.store(out_ptr, tl.where(n > 0, winner + 1, 0).to(tl.int32))


def kernel(n: int, x: torch.Tensor, incx: int) -> torch.Tensor:
    block = 4096
    blocks = triton.cdiv(max(n, 0), block)
    result = torch.empty(1, dtype=torch.int32, device=x.device)
    keys = torch.empty(max(blocks, 1), dtype=x.dtype, device=x.device)
    indices = torch.empty(max(blocks, 1), dtype=torch.int64, device=x.device)
    if blocks:
        _best_partials[(blocks,)](x, keys, indices, n, incx, LARGEST=LARGEST, BLOCK=block,
                                  num_warps=8)
    _pick[(1,)](keys, indices, result, blocks, n, BLOCK=1024)
    return result
