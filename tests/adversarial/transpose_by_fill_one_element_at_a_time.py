# op: aten.t
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# torch transposes with fill_ of 0-dim tensor views, one element at a time (fill_ is allowed
# and is not a copy the recorder keeps); a Triton kernel copies the result.
# Found by a red-team pass of the rule for operators that only move data, 2026-12-06; caught
# by that rule (StagedCopies.moves_data): the copy is no input's staging as it is.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def _tcopy(src, dst):
    _copy[(triton.cdiv(dst.numel(), 1024),)](src, dst, dst.numel(), BLOCK=1024)


def kernel(x):
    rows, cols = x.shape
    mid = torch.empty((cols, rows), dtype=x.dtype, device=x.device)
    for i in range(rows):
        for j in range(cols):
            mid[j, i].fill_(x[i, j])
    out = torch.empty_like(mid)
    _tcopy(mid, out)
    return out
