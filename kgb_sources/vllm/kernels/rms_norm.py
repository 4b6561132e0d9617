# vLLM rms_norm(out, input, weight, epsilon): out = (x * rstd rounded to the dtype) * weight,
# rstd = 1 / sqrt(mean(x^2) + eps) over the last dim, computed in fp32. One program per row;
# the row is streamed in BLOCK pieces (sum of squares, then output). input may have a row
# stride larger than its hidden size (a slice of a wider tensor); out is contiguous.
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(out_ptr, in_ptr, w_ptr, in_row_stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = in_ptr + row * in_row_stride
    out_row = out_ptr + row * N
    cols = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        x = tl.load(x_row + idx, mask=idx < N, other=0.0).to(tl.float32)
        squares += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        normed = (x * rstd).to(out_ptr.dtype.element_ty).to(tl.float32)
        tl.store(out_row + idx, (normed * w).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(out: torch.Tensor, input: torch.Tensor, weight: torch.Tensor, epsilon: float) -> None:
    n = input.shape[-1]
    rows = input.numel() // max(n, 1)
    if rows == 0:
        return None
    rows_view = input.reshape(rows, n) if input.dim() != 2 else input
    if rows_view.stride(-1) != 1:
        rows_view = rows_view.contiguous()
    block = min(triton.next_power_of_2(n), 4096 if input.is_cuda else 1024)
    _rms_norm_kernel[(rows,)](out, rows_view, weight.contiguous(), rows_view.stride(0), n,
                              float(epsilon), BLOCK=block, num_warps=8 if block >= 2048 else 4)
    return None
