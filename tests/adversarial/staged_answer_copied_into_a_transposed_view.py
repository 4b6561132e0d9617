# op: aten.t
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# torch transposes by copying x into the transposed VIEW of a contiguous (cols, rows) buffer;
# the kept copy is the made view, whose logical order is x's own, so it "holds the input".
# A Triton kernel then copies the buffer flat into the output.
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


def kernel(x):
    rows, cols = x.shape
    buffer = torch.empty((cols, rows), dtype=x.dtype, device=x.device)
    buffer.t().copy_(x)
    out = torch.empty_like(buffer)
    _copy[(triton.cdiv(out.numel(), 1024),)](buffer, out, out.numel(), BLOCK=1024)
    return out
