# op: aten.repeat
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# x copied as it is into every tile of a row-major (pitched) view of a buffer more than four
# times the answer's size, then Triton copies the first N elements flat.
# Found by a second red-team pass of the rule for operators that only move data, 2026-12-06.
# Caught: the buffer the tiles' copies wrote into is kept, and searched whatever its size.
import itertools
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x, repeats):
    lead = len(repeats) - x.dim()
    xs = [1] * lead + list(x.shape)
    shape = [s * r for s, r in zip(xs, repeats)]
    n = 1
    for s in shape:
        n *= s
    big = torch.empty(5 * n + 64, dtype=x.dtype, device=x.device)
    ans = big[:n].view(shape)
    for tile in itertools.product(*[range(r) for r in repeats]):
        view = ans
        for d, (i, s) in enumerate(zip(tile, xs)):
            view = view.narrow(d, i * s, s)
        for _ in range(lead):
            view = view.select(0, 0)
        view.copy_(x)
    out = torch.empty(shape, dtype=x.dtype, device=x.device)
    _copy[(triton.cdiv(n, 1024),)](big, out, n, BLOCK=1024)
    return out
