# __NAME__: cuBLAS __OPERATION__, the 1-based index of the first element of x (x_i = x[i * incx],
# i < n) with the __EXTREME__ |x_i|, as a new 1-element int32 tensor (0 when n <= 0, as
# cuBLAS). "First" matters on ties: of equal |x_i| the smallest i wins. The search runs on a
# key, |x_i| for the largest and -|x_i| for the smallest, so both look for a maximum. Two
# launches: at most MAX_PROGRAMS programs each write their best key and the first index
# holding it, then one program picks the best of those, the earliest index on ties.
import torch
import triton
import triton.language as tl

LARGEST = __LARGEST__
# Programs of the first launch: about one wave of 8 warps a program on an H100/H200's SMs.
MAX_PROGRAMS = 1024


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
    # Grid-stride: program p scans blocks p, p + P, ... Each lane sees increasing indices, so
    # a strict ">" keeps its earliest among equal keys; the min over lanes does the rest.
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK).to(tl.int64)
    best = tl.full([BLOCK], -float("inf"), dtype=key_ptr.dtype.element_ty)
    first = tl.zeros([BLOCK], dtype=tl.int64) + n
    for start in range(pid * BLOCK, n, tl.num_programs(0) * BLOCK):
        i = lanes + start
        mask = i < n
        x = tl.load(x_ptr + i * incx, mask=mask, other=0.0)
        key = tl.where(mask, _key(x, LARGEST), -float("inf"))
        better = key > best
        first = tl.where(better, i, first)
        best = tl.where(better, key, best)
    top = tl.max(best, axis=0)
    tl.store(key_ptr + pid, top)
    tl.store(index_ptr + pid, tl.min(tl.where(best == top, first, n), axis=0))


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
    blocks = min(triton.cdiv(max(n, 0), block), MAX_PROGRAMS)
    result = torch.empty(1, dtype=torch.int32, device=x.device)
    keys = torch.empty(max(blocks, 1), dtype=x.dtype, device=x.device)
    indices = torch.empty(max(blocks, 1), dtype=torch.int64, device=x.device)
    if blocks:
        _best_partials[(blocks,)](x, keys, indices, n, incx, LARGEST=LARGEST, BLOCK=block,
                                  num_warps=8)
    _pick[(1,)](keys, indices, result, blocks, n, BLOCK=1024)
    return result
