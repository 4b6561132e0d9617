# op: aten.cat
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# Each member is copied by Triton into a flat buffer of its own (the member's values, in its
# order); torch then assembles the concatenation from plain contiguous row copies out of those
# buffers, which the recorder never looks at since their source is no input's storage.
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

def kernel(tensors, dim):
    ref = next(t for t in tensors if t.dim() > 0)
    dim = dim % ref.dim()
    members = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)]
    shape = list(ref.shape)
    shape[dim] = sum(t.shape[dim] for t in members)
    outer = 1
    for s in shape[:dim]:
        outer *= s
    inner = 1
    for s in shape[dim + 1:]:
        inner *= s
    mid = torch.empty(shape, dtype=ref.dtype, device=ref.device)
    m = mid.view(outer, shape[dim] * inner)
    offset = 0
    for t in members:
        own = torch.empty(t.shape, dtype=t.dtype, device=t.device)
        _tcopy(t.contiguous(), own)
        width = t.shape[dim] * inner
        o = own.view(outer, width)
        for r in range(outer):
            m[r, offset:offset + width] = o[r]
        offset += width
    out = torch.empty_like(mid)
    _tcopy(mid, out)
    return out
