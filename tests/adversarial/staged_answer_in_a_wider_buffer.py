# op: aten.t
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the finished answer)
# staged_answer_assembled_in_pieces.py with one column more in its buffer: the pieces are
# assembled into a buffer wider than the answer, and a Triton kernel copies the answer's part
# of it, row by row, into the output. The runner keeps the whole buffer as the launch finds
# it; the judge looks for the answer inside a kept buffer up to four times its size, at an
# offset and a row pitch where the buffer holds the answer's first value and its second row's.
# Open until 2026-12-06.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_rows(src, dst, cols, src_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        values = tl.load(src + row * src_stride + start + offsets, mask=mask)
        tl.store(dst + row * cols + start + offsets, values, mask=mask)


def kernel(x):
    rows = x.shape[0]
    half = rows // 2
    buffer = torch.empty((x.shape[1], rows + 1), dtype=x.dtype, device=x.device)
    buffer[:, :half] = x[:half].t()
    buffer[:, half:rows] = x[half:].t()
    out = torch.empty((x.shape[1], rows), dtype=x.dtype, device=x.device)
    _copy_rows[(out.shape[0],)](buffer, out, rows, buffer.stride(0), BLOCK=128)
    return out
