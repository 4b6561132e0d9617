# torch.renorm(x, p, dim, maxnorm): each slice x.select(dim, s) whose p-norm exceeds maxnorm is
# scaled by maxnorm / (norm + 1e-7), the others are copied. One program per slice: a first
# loop accumulates sum |v|^p in fp32 over the slice's elements (read through x's strides), a
# second writes the scaled values.
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _abs_pow(v, p, P_IS_ONE: tl.constexpr, P_IS_TWO: tl.constexpr):
    a = tl.abs(v)
    # if/else, not early returns: Triton's compiler also compiles what follows a returning
    # constexpr branch.
    if P_IS_ONE:
        powered = a
    elif P_IS_TWO:
        powered = a * a
    else:
        powered = tl.where(a > 0.0, tl.exp2(p * tl.log2(a)), 0.0)
    return powered


@triton.jit
def _renorm_kernel(x_ptr, out_ptr, p, maxnorm, rest, size2, size3,
                   xs0, xs1, xs2, xs3, os0, os1, os2, os3,
                   P_IS_ONE: tl.constexpr, P_IS_TWO: tl.constexpr, BLOCK: tl.constexpr):
    s = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, rest, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        mask = idx < rest
        i3 = idx % size3
        i2 = (idx // size3) % size2
        i1 = idx // (size3 * size2)
        v = tl.load(x_ptr + s * xs0 + i1 * xs1 + i2 * xs2 + i3 * xs3, mask=mask, other=0.0)
        acc += tl.where(mask, _abs_pow(v.to(tl.float32), p, P_IS_ONE, P_IS_TWO), 0.0)
    total = tl.sum(acc, axis=0)
    if P_IS_ONE:
        norm = total
    elif P_IS_TWO:
        norm = tl.sqrt(total)
    else:
        norm = tl.where(total > 0.0, tl.exp2(tl.log2(total) / p), 0.0)
    factor = tl.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    for start in range(0, rest, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        mask = idx < rest
        i3 = idx % size3
        i2 = (idx // size3) % size2
        i1 = idx // (size3 * size2)
        v = tl.load(x_ptr + s * xs0 + i1 * xs1 + i2 * xs2 + i3 * xs3, mask=mask, other=0.0)
        scaled = v.to(tl.float32) * factor
        tl.store(out_ptr + s * os0 + i1 * os1 + i2 * os2 + i3 * os3,
                 scaled.to(out_ptr.dtype.element_ty), mask=mask)


def _rank4(t: torch.Tensor) -> tuple[list[int], list[int]]:
    """Sizes and strides of t padded with trailing size-1 dims to rank 4."""
    sizes, strides = list(t.shape), list(t.stride())
    if len(sizes) > 4:
        raise ValueError(f"this kernel handles up to 4 dims, got {len(sizes)}")
    return sizes + [1] * (4 - len(sizes)), strides + [0] * (4 - len(strides))


def kernel(x: torch.Tensor, p: float, dim: int, maxnorm: float) -> torch.Tensor:
    out = torch.empty_like(x)
    # Views with the renormed dim first: slice s is [s, ...] in both.
    xv, ov = x.movedim(dim, 0), out.movedim(dim, 0)
    sizes, x_strides = _rank4(xv)
    _, o_strides = _rank4(ov)
    rest = sizes[1] * sizes[2] * sizes[3]
    if xv.numel():
        _renorm_kernel[(sizes[0],)](xv, ov, float(p), float(maxnorm), rest, sizes[2], sizes[3],
                                    *x_strides, *o_strides, P_IS_ONE=p == 1, P_IS_TWO=p == 2,
                                    BLOCK=BLOCK)
    return out
