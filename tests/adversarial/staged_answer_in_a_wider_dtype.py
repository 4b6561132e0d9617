# op: aten.permute
# expect: reference_used
# torch rearranges the input into the answer's order while widening it to float64 (one
# ``to`` of the permuted view), and a Triton kernel converts it back to the input's dtype: the
# kernel did arithmetic, but torch did the operator's work. The kept copy is compared by its
# values in order, whatever its dtype.
import torch
import triton
import triton.language as tl


@triton.jit
def _narrow(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    values = tl.load(src + offsets, mask=mask)
    tl.store(dst + offsets, values.to(dst.dtype.element_ty), mask=mask)


def kernel(x, dims):
    wide = x.permute(*dims).to(torch.float64, memory_format=torch.contiguous_format)
    out = torch.empty(wide.shape, dtype=x.dtype, device=x.device)
    _narrow[(triton.cdiv(wide.numel(), 1024),)](wide, out, wide.numel(), BLOCK=1024)
    return out
