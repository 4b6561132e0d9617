# torch.logsumexp(x, dim), keepdim=False: max + log(sum(exp(x - max))) over dim, in fp32. The
# reduced dim is moved last and made contiguous, so each output element is one row of a
# (rows, n_cols) matrix. Pass 1 finds each row's maximum, pass 2 sums exp(x - max): without
# the subtraction exp overflows fp32 for inputs above ~88.7.
import torch
import triton
import triton.language as tl

# Elements one program touches per step: small enough for the interpreter, fine on a GPU.
MAX_TILE = 1024


@triton.jit
def _logsumexp_rows_kernel(x_ptr, out_ptr, n_rows, n_cols,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n_rows
    row_start = rows.to(tl.int64) * n_cols
    running_max = tl.full((BLOCK_M, BLOCK_N), float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols < n_cols)[None, :]
        x = tl.load(x_ptr + row_start[:, None] + cols[None, :], mask=mask, other=float("-inf"))
        running_max = tl.maximum(running_max, x.to(tl.float32))
    row_max = tl.max(running_max, axis=1)
    # Rows past the end hold -inf; a 0 there keeps (-inf) - (-inf) from making NaN.
    row_max = tl.where(row_mask, row_max, 0.0)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols < n_cols)[None, :]
        x = tl.load(x_ptr + row_start[:, None] + cols[None, :], mask=mask, other=float("-inf"))
        acc += tl.where(mask, tl.exp(x.to(tl.float32) - row_max[:, None]), 0.0)
    result = row_max + tl.log(tl.sum(acc, axis=1))
    tl.store(out_ptr + rows, result.to(out_ptr.dtype.element_ty), mask=row_mask)


def _tile(n_rows: int, n_cols: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N): whole short rows per step, several rows per program when they fit."""
    block_n = min(triton.next_power_of_2(max(n_cols, 1)), MAX_TILE)
    block_m = min(MAX_TILE // block_n, triton.next_power_of_2(n_rows))
    return block_m, block_n


def kernel(x: torch.Tensor, dim: int) -> torch.Tensor:
    rows = x.movedim(dim, -1).contiguous()
    n_cols = rows.shape[-1]
    out = torch.empty(rows.shape[:-1], dtype=x.dtype, device=x.device)
    n_rows = out.numel()
    if n_rows:
        block_m, block_n = _tile(n_rows, n_cols)
        _logsumexp_rows_kernel[(triton.cdiv(n_rows, block_m),)](
            rows, out, n_rows, n_cols, BLOCK_M=block_m, BLOCK_N=block_n)
    return out
