# op: aten.roll
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the finished answer)
# A roll made by torch of copies between contiguous runs at shifted offsets
# (``b[o, s:] = a[o, :n - s]``), each a plain copy that rearranges nothing on its own, then a
# Triton kernel copies the result. A buffer written in part by any copy of the inputs' values
# is kept whole as the next launch finds it. Found by a red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def _roll_one(src, shift, dim):
    """src contiguous; returns a new contiguous tensor rolled by shift along dim."""
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
    current = x.contiguous()               # staging: x's own order, not the answer
    if len(dims) == 0:
        current = _roll_one(current.view(-1), shifts[0], 0).view(x.shape)
    else:
        for shift, dim in zip(shifts, dims):
            current = _roll_one(current, shift, dim % x.dim())
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _copy[(triton.cdiv(out.numel(), 1024),)](current, out, out.numel(), BLOCK=1024)
    return out
