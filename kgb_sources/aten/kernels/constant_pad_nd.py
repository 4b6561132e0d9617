# constant_pad_nd(x, pad, value): pad = (before_last, after_last, before_prev, after_prev, ..)
# pads the last len(pad)//2 dims with `value`; negative entries crop. out[c] = x[c - before] when
# that lies inside x, else value. x is read with its own strides; rank <= 4 (padded with leading
# size-1 dims).
import math

import torch
import triton
import triton.language as tl

MAX_RANK = 4
BLOCK = 1024


@triton.jit
def _pad_kernel(x_ptr, out_ptr, n_elements, value, size1, size2, size3,
                in0, in1, in2, in3, before0, before1, before2, before3,
                x_s0, x_s1, x_s2, x_s3, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64 offsets: large tensors pass 2**31 elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    i3 = offsets % size3
    rest = offsets // size3
    i2 = rest % size2
    rest = rest // size2
    i1 = rest % size1
    i0 = rest // size1
    j0 = i0 - before0
    j1 = i1 - before1
    j2 = i2 - before2
    j3 = i3 - before3
    inside = ((j0 >= 0) & (j0 < in0) & (j1 >= 0) & (j1 < in1) & (j2 >= 0) & (j2 < in2)
              & (j3 >= 0) & (j3 < in3))
    x = tl.load(x_ptr + j0 * x_s0 + j1 * x_s1 + j2 * x_s2 + j3 * x_s3, mask=mask & inside,
                other=0.0)
    out = tl.where(inside, x.to(tl.float32), value)
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, pad: list[int], value: float = 0.0) -> torch.Tensor:
    if x.dim() > MAX_RANK or len(pad) % 2 or len(pad) // 2 > x.dim():
        raise ValueError(f"this kernel pads tensors of rank <= {MAX_RANK} with pairs of pads "
                         f"for at most x.dim() dims, got {tuple(x.shape)} and {pad}")
    lead = MAX_RANK - x.dim()
    in_sizes = [1] * lead + list(x.shape)
    strides = [0] * lead + list(x.stride())
    before = [0] * MAX_RANK
    out_sizes = list(in_sizes)
    for k in range(len(pad) // 2):
        d = MAX_RANK - 1 - k
        before[d] = pad[2 * k]
        out_sizes[d] = in_sizes[d] + pad[2 * k] + pad[2 * k + 1]
    out = torch.empty(out_sizes[lead:], dtype=x.dtype, device=x.device)
    n_elements = out.numel()
    if n_elements:
        _pad_kernel[(triton.cdiv(n_elements, BLOCK),)](
            x, out, n_elements, float(value), *out_sizes[1:], *in_sizes, *before, *strides,
            BLOCK=BLOCK)
    return out
