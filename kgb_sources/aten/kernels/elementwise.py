# Template for kgb's strided elementwise ATen ops: arithmetic, comparisons, logical ops,
# in-place updates, fills and copies. Three fields are filled in (see
# kgb_sources/aten/_elementwise.py): the EXPR marker, a Triton expression of the operands x0,
# x1, x2 (each loaded through its broadcast strides and, when FLOAT, converted to fp32; integer
# and bool operands stay native otherwise) and the scalars p0, p1; the HELPERS marker, any
# @triton.jit helpers that expression calls; and the WRAPPER marker, the op's `kernel(...)`,
# which allocates the output (or takes it, for in-place ops) and calls _elementwise. The
# output is written through its own strides, so an in-place op on a non-contiguous tensor
# writes where that tensor lives.
import torch
import triton
import triton.language as tl

MAX_RANK = 4
BLOCK = 1024


@triton.jit
def _load(ptr, i0, i1, i2, i3, s0, s1, s2, s3, mask, FLOAT: tl.constexpr):
    value = tl.load(ptr + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3, mask=mask)
    if FLOAT:
        value = value.to(tl.float32)
    return value


__HELPERS__


@triton.jit
def _elementwise_kernel(x0_ptr, x1_ptr, x2_ptr, out_ptr, p0, p1, n_elements,
                        size1, size2, size3,
                        x0_s0, x0_s1, x0_s2, x0_s3, x1_s0, x1_s1, x1_s2, x1_s3,
                        x2_s0, x2_s1, x2_s2, x2_s3, o_s0, o_s1, o_s2, o_s3,
                        N_OPERANDS: tl.constexpr, FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    i3 = offsets % size3
    rest = offsets // size3
    i2 = rest % size2
    rest = rest // size2
    i1 = rest % size1
    i0 = rest // size1
    if N_OPERANDS >= 1:
        x0 = _load(x0_ptr, i0, i1, i2, i3, x0_s0, x0_s1, x0_s2, x0_s3, mask, FLOAT)
    if N_OPERANDS >= 2:
        x1 = _load(x1_ptr, i0, i1, i2, i3, x1_s0, x1_s1, x1_s2, x1_s3, mask, FLOAT)
    if N_OPERANDS >= 3:
        x2 = _load(x2_ptr, i0, i1, i2, i3, x2_s0, x2_s1, x2_s2, x2_s3, mask, FLOAT)
    y = __EXPR__
    tl.store(out_ptr + i0 * o_s0 + i1 * o_s1 + i2 * o_s2 + i3 * o_s3,
             y.to(out_ptr.dtype.element_ty), mask=mask)


def _strides(t: torch.Tensor, shape: torch.Size) -> list[int]:
    """t's strides as seen through broadcasting to ``shape`` (0 along broadcast dims)."""
    strides = list(t.expand(shape).stride())
    return [0] * (MAX_RANK - len(shape)) + strides


def _elementwise(out: torch.Tensor, operands: list, p0=0.0, p1=0.0,
                 compute_float: bool = True) -> torch.Tensor:
    shape = out.shape
    if len(shape) > MAX_RANK:
        raise ValueError(f"this kernel handles up to {MAX_RANK} dims, got {len(shape)}")
    if torch.broadcast_shapes(shape, *(t.shape for t in operands)) != shape:
        raise ValueError(f"operands {[tuple(t.shape) for t in operands]} do not broadcast "
                         f"to {tuple(shape)}")
    n_elements = out.numel()
    if n_elements:
        # Unused operand slots get the output (never read: N_OPERANDS guards the loads).
        slots = list(operands) + [out] * (3 - len(operands))
        sizes = [1] * (MAX_RANK - len(shape)) + list(shape)
        strides = [s for t in slots for s in _strides(t, shape)]
        _elementwise_kernel[(triton.cdiv(n_elements, BLOCK),)](
            *slots, out, p0, p1, n_elements, sizes[1], sizes[2], sizes[3],
            *strides, *_strides(out, shape),
            N_OPERANDS=len(operands), FLOAT=compute_float, BLOCK=BLOCK)
    return out


def _floating(*values) -> bool:
    """Whether the ops' common dtype is floating (then operands are computed in fp32)."""
    return any(v.is_floating_point() if isinstance(v, torch.Tensor) else isinstance(v, float)
               for v in values)


def _as_tensor(value, like: torch.Tensor) -> torch.Tensor:
    """A Python scalar operand as a 0-d tensor of the common dtype (ATen rounds it to that
    dtype before comparing or computing), broadcast like any other operand."""
    if isinstance(value, torch.Tensor):
        return value
    return torch.full((), value, dtype=torch.result_type(like, value), device=like.device)


__WRAPPER__
