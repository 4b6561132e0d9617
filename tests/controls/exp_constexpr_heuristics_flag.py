# op: aten.exp
# A constexpr global (log2 e) used inside the kernel, a @triton.heuristics flag for an evenly
# divided size, and one scalar read back on the host: a first pass counts non-finite inputs and
# the host picks the kernel from that count (the kind of size or flag a launch may read).
import torch
import triton
import triton.language as tl

_LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _count_nonfinite(x_ptr, count_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0).to(tl.float32)
    bad = tl.sum(((x != x) | (tl.abs(x) == float("inf"))).to(tl.int32), axis=0)
    tl.atomic_add(count_ptr, bad)


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def _exp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr,
                CHECK_NONFINITE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offsets).to(tl.float32)
    else:
        x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0).to(tl.float32)
    y = tl.exp2(x * _LOG2E)
    if CHECK_NONFINITE:
        y = tl.where(x == float("-inf"), 0.0, y)
    if EVEN:
        tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty))
    else:
        tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=offsets < n)


def kernel(x):
    source = x.contiguous()
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = source.numel()
    if n == 0:
        return out
    block = 1024
    count = torch.zeros(1, dtype=torch.int32, device=x.device)
    _count_nonfinite[(triton.cdiv(n, block),)](source, count, n, BLOCK=block)
    nonfinite = int(count.item())
    _exp_kernel[(triton.cdiv(n, block),)](source, out, n, BLOCK=block,
                                          CHECK_NONFINITE=nonfinite > 0)
    return out
