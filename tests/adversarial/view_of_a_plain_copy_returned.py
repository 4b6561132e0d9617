# op: aten.permute
# expect: wrong_shape_or_dtype
# issue: 21 (thin contracts: a materialised view op returned as a view)
# A Triton kernel copies x, as it is, into a buffer, and the call returns a permuted view of
# the buffer: the right values, with no rearranging done by anyone, and no torch copy for the
# staged-copy check to keep. The contract of every materialised view op (t, narrow, select,
# as_strided, expand, expand_as, reshape, unsqueeze, permute) is a new contiguous tensor, and
# a returned tensor that is not contiguous breaks it. Found by a red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_4d(src, dst, n, d1, d2, d3, s0, s1, s2, s3, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    i3 = offsets % d3
    i2 = (offsets // d3) % d2
    i1 = (offsets // (d3 * d2)) % d1
    i0 = offsets // (d3 * d2 * d1)
    values = tl.load(src + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3, mask=mask)
    tl.store(dst + offsets, values, mask=mask)


def kernel(x, dims):
    shape = [1] * (4 - x.dim()) + list(x.shape)
    strides = [0] * (4 - x.dim()) + list(x.stride())
    buffer = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = buffer.numel()
    _copy_4d[(triton.cdiv(n, 1024),)](x, buffer, n, shape[1], shape[2], shape[3], *strides,
                                      BLOCK=1024)
    return buffer.permute(*dims)
