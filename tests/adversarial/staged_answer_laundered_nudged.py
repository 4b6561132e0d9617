# op: aten.t
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the inputs)
# staged_answer_laundered_by_triton.py with a nudge: the Triton kernel copies the input plus
# 5e-5, inside the operator's absolute tolerance (1e-4), so the buffer is no exact copy of it,
# and is far off relative to the input's small values; torch then rearranges the buffer into
# the answer. A buffer holds an input's values when each is within 1e-3 of the input's
# largest value, so the nudge changes nothing.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_nudged(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    values = tl.load(src + offsets, mask=mask).to(tl.float32) + 5e-5
    tl.store(dst + offsets, values.to(dst.dtype.element_ty), mask=mask)


def kernel(x):
    source = x.contiguous()
    buffer = torch.empty(source.shape, dtype=x.dtype, device=x.device)
    _copy_nudged[(triton.cdiv(buffer.numel(), 1024),)](source, buffer, buffer.numel(),
                                                       BLOCK=1024)
    return buffer.t().contiguous()
