"""LayerNorm over the last dimension (eps 1e-5, as nn.LayerNorm's default): each program
normalises a block of rows, with passes over their columns for the mean, the variance, and
the affine write.
ModelNew: KernelBench's form, whose forward launches the same kernels."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layer_norm_rows(x_ptr, w_ptr, b_ptr, out_ptr, n_rows, n_cols, eps,
                     BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    row_mask = rows < n_rows
    cols = tl.arange(0, BLOCK_COLS)
    row_base = rows[:, None] * n_cols

    acc = tl.zeros([BLOCK_ROWS, BLOCK_COLS], tl.float32)
    for start in range(0, n_cols, BLOCK_COLS):
        c = start + cols
        mask = row_mask[:, None] & (c[None, :] < n_cols)
        acc += tl.load(x_ptr + row_base + c[None, :], mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=1) / n_cols

    acc = tl.zeros([BLOCK_ROWS, BLOCK_COLS], tl.float32)
    for start in range(0, n_cols, BLOCK_COLS):
        c = start + cols
        mask = row_mask[:, None] & (c[None, :] < n_cols)
        x = tl.load(x_ptr + row_base + c[None, :], mask=mask, other=0.0).to(tl.float32)
        diff = tl.where(mask, x - mean[:, None], 0.0)
        acc += diff * diff
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=1) / n_cols + eps)

    for start in range(0, n_cols, BLOCK_COLS):
        c = start + cols
        col_mask = c < n_cols
        mask = row_mask[:, None] & col_mask[None, :]
        x = tl.load(x_ptr + row_base + c[None, :], mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + c, mask=col_mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + c, mask=col_mask, other=0.0).to(tl.float32)
        y = (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(out_ptr + row_base + c[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


def _launch(x, weight, bias, hidden_size):
    x = x.contiguous()
    rows = x.reshape(-1, hidden_size)
    n_rows = rows.shape[0]
    out = torch.empty_like(rows)
    BLOCK_COLS = min(1024, triton.next_power_of_2(max(hidden_size, 1)))
    BLOCK_ROWS = max(1, min(16, 4096 // BLOCK_COLS))
    grid = (max(triton.cdiv(n_rows, BLOCK_ROWS), 1),)
    _layer_norm_rows[grid](rows, weight.contiguous(), bias.contiguous(), out, n_rows,
                           hidden_size, 1e-5, BLOCK_ROWS=BLOCK_ROWS, BLOCK_COLS=BLOCK_COLS)
    return out.reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.ln = nn.LayerNorm(hidden_size)  # holds ln.weight and ln.bias; never called

    def forward(self, x):
        return _launch(x, self.ln.weight, self.ln.bias, self.hidden_size)
