# roll(x, shifts, dims): out[.., i, ..] = x[.., (i - shift) mod size, ..] along each rolled dim
# (a positive shift moves elements towards higher indices); with dims empty (None) x is rolled
# as if flattened in row-major order and then restored to its shape. x is read with its own
# strides; tensors of rank < 4 are padded with leading size-1 dims.
import math

import torch
import triton
import triton.language as tl

MAX_RANK = 4
BLOCK = 1024


@triton.jit
def _source(i, size, shift):
    # The coordinate that lands on i after rolling by shift (0 <= shift < size).
    return (i + size - shift) % size


@triton.jit
def _roll_kernel(x_ptr, out_ptr, n_elements, flat_shift, size1, size2, size3,
                 sh0, sh1, sh2, sh3, x_s0, x_s1, x_s2, x_s3,
                 FLAT: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64 offsets: large tensors pass 2**31 elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    # FLAT rolls the row-major element number; otherwise each coordinate rolls on its own.
    flat = offsets
    if FLAT:
        flat = _source(offsets, n_elements, flat_shift)
    i3 = flat % size3
    rest = flat // size3
    i2 = rest % size2
    rest = rest // size2
    i1 = rest % size1
    i0 = rest // size1
    size0 = n_elements // (size1 * size2 * size3)
    if not FLAT:
        i0 = _source(i0, size0, sh0)
        i1 = _source(i1, size1, sh1)
        i2 = _source(i2, size2, sh2)
        i3 = _source(i3, size3, sh3)
    value = tl.load(x_ptr + i0 * x_s0 + i1 * x_s1 + i2 * x_s2 + i3 * x_s3, mask=mask)
    tl.store(out_ptr + offsets, value, mask=mask)


def kernel(x: torch.Tensor, shifts: list[int], dims: list[int] = ()) -> torch.Tensor:
    if x.dim() > MAX_RANK:
        raise ValueError(f"this kernel rolls tensors of rank <= {MAX_RANK}, got {x.dim()}")
    shifts, dims = list(shifts), list(dims or [])
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n_elements = x.numel()
    if n_elements == 0:
        return out
    lead = MAX_RANK - x.dim()
    sizes = [1] * lead + list(x.shape)
    strides = [0] * lead + list(x.stride())
    per_dim = [0] * MAX_RANK
    flat_shift = 0
    if dims:
        for shift, dim in zip(shifts, dims):
            d = lead + dim % x.dim()
            per_dim[d] = (per_dim[d] + shift) % sizes[d]
    else:
        flat_shift = shifts[0] % n_elements
    _roll_kernel[(triton.cdiv(n_elements, BLOCK),)](
        x, out, n_elements, flat_shift, sizes[1], sizes[2], sizes[3], *per_dim, *strides,
        FLAT=not dims, BLOCK=BLOCK)
    return out
