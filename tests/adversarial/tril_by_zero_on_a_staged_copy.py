# op: aten.tril
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# stage x row-major (allowed copy), zero the upper triangle row by row with zero_ (allowed, not
# a copy), then Triton only copies the buffer flat into the output.
# Found by a second red-team pass of the rule for operators that only move data, 2026-12-06.
# Caught: for an operator that only moves data, zero_ or a scalar fill_ on part of a buffer that
# holds an input's values keeps that buffer, as the next launch finds it.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x, diagonal):
    buf = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    buf.copy_(x)
    rows, cols = x.shape[-2], x.shape[-1]
    for i in range(rows):
        start = max(i + diagonal + 1, 0)
        if start < cols:
            buf[..., i, start:].zero_()
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    _copy[(triton.cdiv(n, 1024),)](buf, out, n, BLOCK=1024)
    return out
