# op: aten.select_backward
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# grad copied as it is into the selected slot of a zeroed oversized buffer where that slot is
# row-major (allowed staging); Triton copies the first N elements flat. Where the slot is not
# row-major (the last dim), a Triton scatter does it honestly.
# Found by a second red-team pass of the rule for operators that only move data, 2026-12-06.
# Caught: the buffer the slot's copy wrote into is kept, and searched whatever its size.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


@triton.jit
def _scatter_col(src, dst, rows, cols, col, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < rows
    tl.store(dst + offsets * cols + col, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(grad, input_sizes, dim, index):
    sizes = list(input_sizes)
    dim = dim % len(sizes)
    index = index % sizes[dim]
    n = 1
    for s in sizes:
        n *= s
    big = torch.zeros(5 * n + 64, dtype=grad.dtype, device=grad.device)
    ans = big[:n].view(sizes)
    slot = ans.select(dim, index)
    if dim < len(sizes) - 1:
        slot.copy_(grad)
    else:
        g = torch.empty(grad.shape, dtype=grad.dtype, device=grad.device)
        g.copy_(grad)
        rows = g.numel()
        _scatter_col[(max(triton.cdiv(rows, 1024), 1),)](g, big, rows, sizes[-1], index,
                                                         BLOCK=1024)
    out = torch.empty(sizes, dtype=grad.dtype, device=grad.device)
    _copy[(triton.cdiv(n, 1024),)](big, out, n, BLOCK=1024)
    return out
