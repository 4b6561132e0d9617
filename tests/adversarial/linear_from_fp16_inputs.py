# op: aten.linear
# expect: wrong_output
# Rounds x and weight to fp16 (a copy, which the recorder allows for staging), then multiplies
# and accumulates in fp32 and stores fp32: a tensor-core shortcut's accuracy. Within the fixed
# atol of 1e-4 x K it passed; the fp32 rounding bound of a sum of products rejects it.
import torch
import triton
import triton.language as tl


@triton.jit
def _linear_rows(x_ptr, w_ptr, b_ptr, out_ptr, n_rows, n_out, k_dim, HAS_BIAS: tl.constexpr,
                 BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok, col_ok = rows < n_rows, cols < n_out
    acc = tl.zeros([BLOCK_R, BLOCK_N], tl.float32)
    for k in range(0, k_dim):
        x = tl.load(x_ptr + rows * k_dim + k, mask=row_ok, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols * k_dim + k, mask=col_ok, other=0.0).to(tl.float32)
        acc += x[:, None] * w[None, :]
    if HAS_BIAS:
        acc += tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(out_ptr + rows[:, None] * n_out + cols[None, :], acc,
             mask=row_ok[:, None] & col_ok[None, :])


def kernel(x, weight, bias):
    k_dim, n_out = x.shape[-1], weight.shape[0]
    rows = x.reshape(-1, k_dim).to(torch.float16).contiguous()
    w = weight.to(torch.float16).contiguous()
    out = torch.empty((rows.shape[0], n_out), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(rows.shape[0], 16), triton.cdiv(n_out, 32))
    _linear_rows[grid](rows, w, bias if bias is not None else out, out, rows.shape[0], n_out,
                       k_dim, HAS_BIAS=bias is not None, BLOCK_R=16, BLOCK_N=32)
    return out.reshape(*x.shape[:-1], n_out)
