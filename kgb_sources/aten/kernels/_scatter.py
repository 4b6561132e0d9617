# Shared by scatter, scatter_add and index_add: scatter_into writes (or, with accumulate,
# atomically adds) each element of src (or a scalar value) into out at its own coordinates,
# with the coordinate along `dim` replaced by the matching entry of index. The scattered dim is
# moved last in views of out, index and src (no copy); ranks < 4 get leading size-1 dims.


@triton.jit
def _scatter_kernel(out_ptr, index_ptr, src_ptr, value, alpha, n_elements, size1, size2, size3,
                    o_s0, o_s1, o_s2, o_s3, i_s0, i_s1, i_s2, i_s3, s_s0, s_s1, s_s2, s_s3,
                    HAS_SRC: tl.constexpr, ACCUMULATE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64 offsets: large tensors pass 2**31 elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    # Coordinates in the index tensor (its view with the scattered dim last).
    i3 = offsets % size3
    rest = offsets // size3
    i2 = rest % size2
    rest = rest // size2
    i1 = rest % size1
    i0 = rest // size1
    idx = tl.load(index_ptr + i0 * i_s0 + i1 * i_s1 + i2 * i_s2 + i3 * i_s3, mask=mask, other=0)
    if HAS_SRC:
        v = tl.load(src_ptr + i0 * s_s0 + i1 * s_s1 + i2 * s_s2 + i3 * s_s3, mask=mask,
                    other=0.0).to(tl.float32)
    else:
        v = tl.zeros((BLOCK,), dtype=tl.float32) + value
    target = out_ptr + i0 * o_s0 + i1 * o_s1 + i2 * o_s2 + idx * o_s3
    if ACCUMULATE:
        tl.atomic_add(target, v * alpha, mask=mask)
    else:
        tl.store(target, v.to(out_ptr.dtype.element_ty), mask=mask)


def _padded4(values, fill):
    return [fill] * (4 - len(values)) + list(values)


def scatter_into(out, dim, index, src=None, value=0.0, accumulate=False, alpha=1.0):
    """out[.., index[c], ..] (=|+=) alpha * src[c] (or value) for every coordinate c of index."""
    if out.dim() > 4 or index.dim() != out.dim():
        raise ValueError(f"this kernel scatters tensors of rank <= 4 with an index of the same "
                         f"rank, got out {tuple(out.shape)}, index {tuple(index.shape)}")
    n_elements = index.numel()
    if n_elements == 0:
        return
    dim = dim % out.dim()
    out_view, index_view = out.movedim(dim, -1), index.movedim(dim, -1)
    src_view = src.movedim(dim, -1) if src is not None else index_view
    sizes = _padded4(index_view.shape, 1)
    _scatter_kernel[(triton.cdiv(n_elements, BLOCK),)](
        out_view, index_view, src_view, float(value), float(alpha), n_elements,
        sizes[1], sizes[2], sizes[3], *_padded4(out_view.stride(), 0),
        *_padded4(index_view.stride(), 0), *_padded4(src_view.stride(), 0),
        HAS_SRC=src is not None, ACCUMULATE=accumulate, BLOCK=BLOCK)


def accumulation_buffer(x):
    """A new contiguous copy of x to add into: fp32 for fp16/bf16 (sums are rounded once, at
    the end), x's dtype otherwise."""
    dtype = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    buffer = torch.empty(x.shape, dtype=dtype, device=x.device)
    copy_strided(x, buffer, x.shape, x.stride(), buffer.stride())
    return buffer


def rounded(buffer, dtype):
    """buffer as a new contiguous tensor of dtype (the buffer itself when it already is)."""
    if buffer.dtype == dtype:
        return buffer
    out = torch.empty(buffer.shape, dtype=dtype, device=buffer.device)
    copy_strided(buffer, out, buffer.shape, buffer.stride(), out.stride())
    return out
