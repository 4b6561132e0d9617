# op: aten.flip
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# Triton copies x into a buffer of its own; torch flips it with single-element copies (under 16
# elements each, from a storage that is no input's), then Triton copies the result.
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

def kernel(x, dims):
    dims = {d % x.dim() for d in dims}
    buf = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _tcopy(x.contiguous(), buf)
    mid = torch.empty_like(buf)
    for idx in itertools.product(*[range(s) for s in x.shape]):
        src = tuple(s - 1 - i if d in dims else i for d, (i, s) in enumerate(zip(idx, x.shape)))
        mid[idx].copy_(buf[src])
    out = torch.empty_like(mid)
    _tcopy(mid, out)
    return out
