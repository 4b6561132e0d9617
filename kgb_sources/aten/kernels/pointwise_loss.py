# __NAME__(x, y, [target,] reduction): an elementwise loss of x and y (and a third operand c,
# the target, for three-input losses), computed in fp32, then returned as
# is (reduction="none", x's shape) or summed ("sum") or averaged ("mean") into a 0-d tensor of
# x's dtype. Stage 1: each program computes BLOCK losses and stores them, or stores their fp32
# sum as one partial; stage 2 (mean/sum only): one program adds the partials, in a fixed order,
# and divides by the element count for "mean".
import torch
import triton
import triton.language as tl

# Elements one program touches: small enough for the interpreter, fine on a GPU.
BLOCK = 1024


@triton.jit
def _loss_kernel(x_ptr, y_ptr, z_ptr, out_ptr, partial_ptr, n, param,
                 HAS_THIRD: tl.constexpr, REDUCE: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(y_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    if HAS_THIRD:
        c = tl.load(z_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    p = param
    __LOSS__
    if REDUCE:
        tl.store(partial_ptr + tl.program_id(0), tl.sum(tl.where(mask, loss, 0.0), axis=0))
    else:
        tl.store(out_ptr + offsets, loss.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _sum_partials_kernel(partial_ptr, out_ptr, n_partials, divisor, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_partials, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + idx, mask=idx < n_partials, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr, (total / divisor).to(out_ptr.dtype.element_ty))


def kernel(__SIGNATURE__) -> torch.Tensor:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"unknown reduction {reduction!r}")
    x, y, z = x.contiguous(), y.contiguous(), __THIRD__.contiguous()
    n = x.numel()
    n_programs = max(triton.cdiv(n, BLOCK), 1)
    if reduction == "none":
        out = torch.empty_like(x)
        _loss_kernel[(n_programs,)](x, y, z, out, out, n, float(__PARAM__),
                                    HAS_THIRD=__HAS_THIRD__, REDUCE=False, BLOCK=BLOCK)
        return out
    out = torch.empty((), dtype=x.dtype, device=x.device)
    partials = torch.empty(n_programs, dtype=torch.float32, device=x.device)
    _loss_kernel[(n_programs,)](x, y, z, out, partials, n, float(__PARAM__),
                                HAS_THIRD=__HAS_THIRD__, REDUCE=True, BLOCK=BLOCK)
    divisor = float(n) if reduction == "mean" else 1.0
    _sum_partials_kernel[(1,)](partials, out, n_programs, divisor, BLOCK=BLOCK)
    return out
