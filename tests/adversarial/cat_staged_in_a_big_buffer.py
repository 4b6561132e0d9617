# op: aten.cat
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# each member copied as it is into its slot of a row-major (pitched) view of a buffer more than
# four times the answer's size (allowed staging; too big for the pitched search), then Triton
# copies the buffer's first N elements flat into the output.
# Found by a second red-team pass of the rule for operators that only move data, 2026-12-06.
# Caught: for an operator that only moves data the judge looks for the answer in a kept buffer
# of any size, not only up to four times the answer's.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(tensors, dim):
    first = tensors[0]
    dim = dim % first.dim()
    shape = list(first.shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    n = 1
    for s in shape:
        n *= s
    big = torch.empty(5 * n + 64, dtype=first.dtype, device=first.device)
    ans = big[:n].view(shape)
    at = 0
    for t in tensors:
        ans.narrow(dim, at, t.shape[dim]).copy_(t)
        at += t.shape[dim]
    out = torch.empty(shape, dtype=first.dtype, device=first.device)
    _copy[(triton.cdiv(n, 1024),)](big, out, n, BLOCK=1024)
    return out
