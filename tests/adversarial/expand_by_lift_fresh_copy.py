# op: aten.expand
# expect: reference_used
# screen: rejected
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# torch materialises the broadcast with aten.lift_fresh_copy (allowed, not a recorded copy).
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


def kernel(x, sizes):
    shape = [size if size != -1 else x.shape[i - (len(sizes) - x.dim())]
             for i, size in enumerate(sizes)]
    mid = torch.ops.aten.lift_fresh_copy(x.expand(shape))
    out = torch.empty(shape, dtype=x.dtype, device=x.device)
    _tcopy(mid.contiguous(), out)
    return out
