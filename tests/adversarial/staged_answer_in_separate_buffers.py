# op: aten.t
# expect: reference_used
# issue: 21 (torch work the recorder allows; a Triton kernel only copies the finished answer)
# The answer's two halves made by torch in buffers of their own (each half of the input,
# transposed, made contiguous), then one Triton kernel copies each buffer into its half of the
# output. Each kept copy holds half the answer and no buffer holds it whole. Caught since
# 2026-12-06 by the rule for operators that only move data: each kept copy holds an input's
# values in another order (the operator's work), where a cat kernel's staged members hold
# theirs as given (tests/controls/cat_stages_members.py).
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_into_columns(src, dst, rows, cols, first, total, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        values = tl.load(src + row * cols + start + offsets, mask=mask)
        tl.store(dst + row * total + first + start + offsets, values, mask=mask)


def kernel(x):
    rows = x.shape[0]
    half = rows // 2
    top = x[:half].t().contiguous()
    bottom = x[half:].t().contiguous()
    out = torch.empty((x.shape[1], rows), dtype=x.dtype, device=x.device)
    _copy_into_columns[(out.shape[0],)](top, out, out.shape[0], half, 0, rows, BLOCK=128)
    _copy_into_columns[(out.shape[0],)](bottom, out, out.shape[0], rows - half, half, rows,
                                        BLOCK=128)
    return out
