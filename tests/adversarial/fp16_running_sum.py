# op: aten.sum
# expect: wrong_output
# Accumulates the sum in float16, element by element: lower precision than the op allows.
import torch
import triton
import triton.language as tl


@triton.jit
def _sum_rows_fp16(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((1,), dtype=tl.float16)
    for col in range(0, n_cols):
        value = tl.load(x_ptr + row * n_cols + col + tl.arange(0, 1))
        acc = (acc + value.to(tl.float16)).to(tl.float16)
    tl.store(out_ptr + row + tl.arange(0, 1), acc.to(out_ptr.dtype.element_ty))


def kernel(x, dim):
    moved = x.movedim(dim, -1).contiguous()
    rows = moved.reshape(-1, moved.shape[-1])
    out = torch.empty(rows.shape[0], dtype=x.dtype, device=x.device)
    _sum_rows_fp16[(rows.shape[0],)](rows, out, rows.shape[1], BLOCK=1)
    return out.reshape(moved.shape[:-1])
