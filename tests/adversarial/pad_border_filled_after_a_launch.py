# op: aten.constant_pad_nd
# expect: reference_used
# issue: 21 (torch work the recorder allows, for an operator that only moves data)
# x copied as it is into a row-major view of a buffer at the pad's offsets (allowed staging),
# borders set to a wrong value; a Triton launch (the buffer's snapshot: not the answer); then
# scalar fill_ (not a copy) writes the pad value, and Triton copies an offset view out.
# Found by a second red-team pass of the rule for operators that only move data, 2026-12-06.
# Caught: the scalar fill_ on the staged buffer keeps it again, as the second launch finds it.
import torch
import triton
import triton.language as tl


@triton.jit
def _gather4(src, dst, n, s1, s2, s3, t0, t1, t2, t3, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    i3 = offsets % s3
    r = offsets // s3
    i2 = r % s2
    r = r // s2
    i1 = r % s1
    i0 = r // s1
    v = tl.load(src + i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3, mask=mask)
    tl.store(dst + offsets, v, mask=mask)


def _launch(src, dst):
    shape = [1] * (4 - src.dim()) + list(src.shape)
    stride = [0] * (4 - src.dim()) + list(src.stride())
    n = dst.numel()
    _gather4[(max(triton.cdiv(n, 1024), 1),)](src, dst, n, shape[1], shape[2], shape[3],
                                               stride[0], stride[1], stride[2], stride[3],
                                               BLOCK=1024)


def kernel(x, pad, value):
    nd = x.dim()
    lo = [0] * nd
    hi = [0] * nd
    for k in range(len(pad) // 2):
        lo[nd - 1 - k] = pad[2 * k]
        hi[nd - 1 - k] = pad[2 * k + 1]
    xs = list(x.shape)
    outs = [xs[d] + lo[d] + hi[d] for d in range(nd)]
    bshape = [xs[d] + abs(lo[d]) + abs(hi[d]) for d in range(nd)]
    buf = torch.full(bshape, value + 1.0, dtype=x.dtype, device=x.device)
    xin = buf
    ans = buf
    for d in range(nd):
        xin = xin.narrow(d, max(lo[d], 0), xs[d])
        ans = ans.narrow(d, max(-lo[d], 0), outs[d])
    xin.copy_(x)
    out = torch.empty(outs, dtype=x.dtype, device=x.device)
    _launch(ans, out)  # the snapshot sees value + 1 in the borders
    for d in range(nd):
        if lo[d] > 0:
            ans.narrow(d, 0, lo[d]).fill_(value)
        if hi[d] > 0:
            ans.narrow(d, outs[d] - hi[d], hi[d]).fill_(value)
    _launch(ans, out)
    return out
