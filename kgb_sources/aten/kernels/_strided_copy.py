# Shared by the movement ops: copy_strided moves every element of a strided view of `src` to
# the matching element of a strided view of `dst`; materialise makes a new contiguous tensor of
# a view given as (sizes, strides, offset) over a base tensor. Strides may be 0 (expand) or
# negative (flip, rot90): each element's address is computed from its coordinates, so no view
# needs to be one torch can describe. Views of rank > 6 after dropping size-1 dims are refused.
import math

import torch
import triton
import triton.language as tl

MAX_RANK = 6
BLOCK = 1024  # elements per program: small enough for the interpreter, fine on a GPU


@triton.jit
def _strided_copy_kernel(src_ptr, dst_ptr, n_elements, src_offset, dst_offset,
                         size1, size2, size3, size4, size5,
                         ss0, ss1, ss2, ss3, ss4, ss5, ds0, ds1, ds2, ds3, ds4, ds5,
                         BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64 offsets: large tensors pass 2**31 elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    # Coordinates of each element in the (size0, .., size5) view, last dim fastest.
    i5 = offsets % size5
    rest = offsets // size5
    i4 = rest % size4
    rest = rest // size4
    i3 = rest % size3
    rest = rest // size3
    i2 = rest % size2
    rest = rest // size2
    i1 = rest % size1
    i0 = rest // size1
    src = src_offset + i0 * ss0 + i1 * ss1 + i2 * ss2 + i3 * ss3 + i4 * ss4 + i5 * ss5
    dst = dst_offset + i0 * ds0 + i1 * ds1 + i2 * ds2 + i3 * ds3 + i4 * ds4 + i5 * ds5
    value = tl.load(src_ptr + src, mask=mask)
    tl.store(dst_ptr + dst, value, mask=mask)


def contiguous_strides(sizes) -> list[int]:
    strides, step = [], 1
    for size in reversed(list(sizes)):
        strides.append(step)
        step *= max(int(size), 1)
    return strides[::-1]


def copy_strided(src, dst, sizes, src_strides, dst_strides, src_offset=0, dst_offset=0):
    """dst[c] = src[c] for every coordinate c of `sizes`, where src[c] is the element at
    src.data_ptr() + (src_offset + c . src_strides) elements, and likewise for dst."""
    n_elements = math.prod(int(s) for s in sizes)
    if n_elements == 0:
        return
    kept = [(int(s), int(a), int(b)) for s, a, b in zip(sizes, src_strides, dst_strides)
            if int(s) != 1]
    if len(kept) > MAX_RANK:
        raise ValueError(f"this kernel copies views of rank <= {MAX_RANK}, got sizes {sizes}")
    kept = [(1, 0, 0)] * (MAX_RANK - len(kept)) + kept
    sizes_, src_strides_, dst_strides_ = zip(*kept)
    _strided_copy_kernel[(triton.cdiv(n_elements, BLOCK),)](
        src, dst, n_elements, src_offset, dst_offset, *sizes_[1:], *src_strides_, *dst_strides_,
        BLOCK=BLOCK)


def materialise(base, sizes, strides, offset=0):
    """A new contiguous tensor of `sizes` holding the view (sizes, strides, offset) of base."""
    sizes = [int(s) for s in sizes]
    out = torch.empty(sizes, dtype=base.dtype, device=base.device)
    copy_strided(base, out, sizes, strides, contiguous_strides(sizes), src_offset=offset)
    return out


def materialise_view(view):
    """A new contiguous copy of a torch view (its data_ptr already includes its offset)."""
    return materialise(view, view.shape, view.stride())
