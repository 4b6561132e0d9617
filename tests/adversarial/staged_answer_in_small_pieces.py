# op: aten.t
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the finished answer)
# The transpose assembled by torch from copies of at most 15 elements each, under the size
# at which a copy is kept, into one buffer a Triton kernel then copies. A buffer written in
# part by any copy of the inputs' values is kept whole as the next launch finds it. Found by a
# red-team pass, 2026-12-06.
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
    for j in range(cols):
        for k in range(0, rows, 15):
            buffer[j, k:k + 15] = x[k:k + 15, j]
    out = torch.empty_like(buffer)
    _copy[(triton.cdiv(out.numel(), 1024),)](buffer, out, out.numel(), BLOCK=1024)
    return out
