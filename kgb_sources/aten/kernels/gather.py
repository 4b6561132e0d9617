# gather: out[i0, .., id, .., in] = x[i0, .., index[i0, .., id, .., in], .., in] along `dim`.
# The gathered dim is moved last in views of x, index and out (no copy), so one kernel serves
# every dim; tensors of rank < 4 are padded with leading size-1 dims.
import torch
import triton
import triton.language as tl

MAX_RANK = 4


@triton.jit
def _gather_kernel(x_ptr, index_ptr, out_ptr, n_elements, size1, size2, size3,
                   x_s0, x_s1, x_s2, x_s3, i_s0, i_s1, i_s2, i_s3, o_s0, o_s1, o_s2, o_s3,
                   BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64 offsets: large tensors pass 2**31 elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    # Coordinates in the index tensor (its view with the gathered dim last).
    i3 = offsets % size3
    rest = offsets // size3
    i2 = rest % size2
    rest = rest // size2
    i1 = rest % size1
    i0 = rest // size1
    idx = tl.load(index_ptr + i0 * i_s0 + i1 * i_s1 + i2 * i_s2 + i3 * i_s3, mask=mask, other=0)
    value = tl.load(x_ptr + i0 * x_s0 + i1 * x_s1 + i2 * x_s2 + idx * x_s3, mask=mask)
    tl.store(out_ptr + i0 * o_s0 + i1 * o_s1 + i2 * o_s2 + i3 * o_s3, value, mask=mask)


def _padded(values, fill: int) -> list[int]:
    return [fill] * (MAX_RANK - len(values)) + list(values)


def kernel(x: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    if x.dim() == 0 or x.dim() > MAX_RANK or index.dim() != x.dim():
        raise ValueError(f"this kernel gathers tensors of rank 1..{MAX_RANK} with an index of "
                         f"the same rank, got x {tuple(x.shape)}, index {tuple(index.shape)}")
    dim = dim % x.dim()
    out = torch.empty(index.shape, dtype=x.dtype, device=x.device)
    n_elements = out.numel()
    if n_elements:
        x_view, index_view, out_view = (t.movedim(dim, -1) for t in (x, index, out))
        sizes = _padded(index_view.shape, 1)
        block = 1024
        _gather_kernel[(triton.cdiv(n_elements, block),)](
            x_view, index_view, out_view, n_elements, sizes[1], sizes[2], sizes[3],
            *_padded(x_view.stride(), 0), *_padded(index_view.stride(), 0),
            *_padded(out_view.stride(), 0), BLOCK=block)
    return out
