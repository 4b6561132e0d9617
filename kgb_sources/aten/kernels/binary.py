# Template for the binary pointwise ATen ops: __EXPR__ is an expression of `a` and `b` (fp32).
# Broadcasting and arbitrary strides are handled by indexing both inputs through their
# broadcast strides (0 along broadcast dims), so no input is copied.
import torch
import triton
import triton.language as tl

MAX_RANK = 4


@triton.jit
def _binary_kernel(a_ptr, b_ptr, out_ptr, n_elements, size1, size2, size3,
                   a_s0, a_s1, a_s2, a_s3, b_s0, b_s1, b_s2, b_s3, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    i3 = offsets % size3
    rest = offsets // size3
    i2 = rest % size2
    rest = rest // size2
    i1 = rest % size1
    i0 = rest // size1
    a = tl.load(a_ptr + i0 * a_s0 + i1 * a_s1 + i2 * a_s2 + i3 * a_s3, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + i0 * b_s0 + i1 * b_s1 + i2 * b_s2 + i3 * b_s3, mask=mask).to(tl.float32)
    y = __EXPR__
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def _broadcast_strides(t: torch.Tensor, shape: torch.Size) -> list[int]:
    strides = list(t.expand(shape).stride())
    return [0] * (MAX_RANK - len(shape)) + strides


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    shape = torch.broadcast_shapes(a.shape, b.shape)
    if len(shape) > MAX_RANK:
        raise ValueError(f"this kernel handles up to {MAX_RANK} dims, got {len(shape)}")
    out = torch.empty(shape, dtype=torch.result_type(a, b), device=a.device)
    n_elements = out.numel()
    if n_elements:
        sizes = [1] * (MAX_RANK - len(shape)) + list(shape)
        block = 1024
        _binary_kernel[(triton.cdiv(n_elements, block),)](
            a, b, out, n_elements, sizes[1], sizes[2], sizes[3],
            *_broadcast_strides(a, shape), *_broadcast_strides(b, shape), BLOCK=block)
    return out
