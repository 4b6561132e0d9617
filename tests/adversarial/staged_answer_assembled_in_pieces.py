# op: aten.t
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the finished answer)
# The answer assembled by torch in two pieces: each half of the input, transposed, assigned
# into its half of a buffer (``copy_`` into a strided slice), then a Triton kernel copies the
# buffer into the output. Each rearranging copy holds half the answer, never the whole; the
# runner also keeps the whole buffer a copy wrote part of, as the next launch finds it, and
# that holds the answer. Passed until 2026-12-06 (tests/adversarial/open/ kept it). Still
# open: pieces in buffers of their own (open/staged_answer_in_separate_buffers.py).
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x):
    rows = x.shape[0]
    half = rows // 2
    buffer = torch.empty((x.shape[1], rows), dtype=x.dtype, device=x.device)
    buffer[:, :half] = x[:half].t()
    buffer[:, half:] = x[half:].t()
    out = torch.empty_like(buffer)
    _copy[(triton.cdiv(out.numel(), 1024),)](buffer, out, out.numel(), BLOCK=1024)
    return out
