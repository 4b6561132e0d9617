# op: aten.roll
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# staged_answer_rolled_by_offset_copies.py, but a Triton kernel first copies the input into a
# buffer of its own (not "derived"), so the plain offset copies from it are never looked at.
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


def _roll_one(src, shift, dim):
    size = src.shape[dim]
    shift %= size
    outer = 1
    for s in src.shape[:dim]:
        outer *= s
    inner = src.numel() // (outer * size)
    a = src.view(outer, size, inner)
    dst = torch.empty_like(src)
    b = dst.view(outer, size, inner)
    for o in range(outer):
        if shift:
            b[o, shift:] = a[o, :size - shift]
            b[o, :shift] = a[o, size - shift:]
        else:
            b[o] = a[o]
    return dst


def kernel(x, shifts, dims):
    staged = x.contiguous()
    current = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _tcopy(staged, current)                # identity copy: the input's values, unchanged
    if len(dims) == 0:
        current = _roll_one(current.view(-1), shifts[0], 0).view(x.shape)
    else:
        for shift, dim in zip(shifts, dims):
            current = _roll_one(current, shift, dim % x.dim())
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _tcopy(current, out)
    return out
