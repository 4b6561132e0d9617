# op: aten.permute
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the inputs)
# staged_answer_laundered_by_triton.py through a reversible change of values: a Triton kernel
# writes 2 * x, torch permutes that buffer with a rearranging copy, and a second Triton kernel
# halves the result into the output. No buffer holds an input's values, and no kept copy holds
# the answer's. Found by a red-team pass, 2026-12-06. Caught since by the rule for operators
# that only move data: the torch permute's copy (of 2 * x) holds no input as it is.
import torch
import triton
import triton.language as tl


@triton.jit
def _scaled_copy(src, dst, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    values = tl.load(src + offsets, mask=mask)
    tl.store(dst + offsets, (values * factor).to(dst.dtype.element_ty), mask=mask)


def kernel(x, dims):
    source = x.contiguous()               # staging: x's own order
    doubled = torch.empty_like(source)
    n = source.numel()
    _scaled_copy[(triton.cdiv(n, 1024),)](source, doubled, n, 2.0, BLOCK=1024)
    moved = doubled.permute(*dims).contiguous()      # torch does the permute
    out = torch.empty_like(moved)
    _scaled_copy[(triton.cdiv(n, 1024),)](moved, out, n, 0.5, BLOCK=1024)
    return out
