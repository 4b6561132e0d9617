# op: aten.permute
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the finished answer)
# The permutation done by torch on a byte view of the input with one more dim (each
# element's bytes), so the kept copy has two to eight times the output's element count and was
# never compared; read as the output's dtype, bit for bit, it is the answer. Found by a
# red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x, dims):
    nd = x.dim()
    dims = [d % nd for d in dims]
    source = x.contiguous()                 # staging: x's own order, not the answer
    size = x.element_size()
    raw = source.view(torch.uint8).view(*x.shape, size)
    staged = raw.permute(*dims, nd).contiguous()   # the answer, byte by byte
    answer = staged.view(x.dtype).view([x.shape[d] for d in dims])
    out = torch.empty(answer.shape, dtype=x.dtype, device=x.device)
    _copy[(triton.cdiv(out.numel(), 1024),)](answer, out, out.numel(), BLOCK=1024)
    return out
