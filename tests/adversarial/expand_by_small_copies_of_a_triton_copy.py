# op: aten.expand
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# Triton copies x into a buffer of its own; torch then writes the expanded view of that buffer
# into the output one last-dim row at a time, in chunks of at most 15 elements.
# Found by a red-team pass of the rule for operators that only move data, 2026-12-06; caught
# by that rule (StagedCopies.moves_data): the copy is no input's staging as it is.
import itertools
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
    staged = x.contiguous()
    buf = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _tcopy(staged, buf)
    view = buf.expand(shape)
    mid = torch.empty(shape, dtype=x.dtype, device=x.device)
    last = shape[-1]
    for idx in itertools.product(*[range(s) for s in shape[:-1]]):
        for k in range(0, last, 15):
            mid[idx][k:k + 15] = view[idx][k:k + 15]
    out = torch.empty_like(mid)
    _tcopy(mid, out)
    return out
