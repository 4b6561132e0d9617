"""Softmax over dim 1 of a 2-D input: one program per row, three passes over its columns
(maximum, sum of exponentials, normalised write), so any row length works.
ModelNew: KernelBench's form, whose forward launches the same kernels."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    out_row = out_ptr + row * out_row_stride
    cols = tl.arange(0, BLOCK)

    running_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        running_max = tl.maximum(running_max, x)
    row_max = tl.max(running_max, axis=0)

    running_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        running_sum += tl.where(mask, tl.exp(x - row_max), 0.0)
    denominator = tl.sum(running_sum, axis=0)

    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) / denominator
        tl.store(out_row + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def _launch(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = min(1024, triton.next_power_of_2(max(n_cols, 1)))
    _softmax_rows[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=BLOCK)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _launch(x)
