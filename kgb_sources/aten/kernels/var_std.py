# torch.__OP__(x, dim, correction=correction, keepdim=keepdim), in fp32. The reduced dim is moved
# last and made contiguous, so each output element is one row of a (rows, n_cols) matrix. Two
# passes over each row: the mean, then the sum of squared deviations from it (no
# E[x^2] - E[x]^2 cancellation), divided by max(n - correction, 0) as torch does.
import torch
import triton
import triton.language as tl

# Elements one program touches per step: small enough for the interpreter, fine on a GPU.
MAX_TILE = 1024


@triton.jit
def _var_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, divisor,
                     TAKE_SQRT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n_rows
    row_start = rows.to(tl.int64) * n_cols
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols < n_cols)[None, :]
        x = tl.load(x_ptr + row_start[:, None] + cols[None, :], mask=mask, other=0.0)
        acc += x.to(tl.float32)
    mean = tl.sum(acc, axis=1) / n_cols
    squares = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols < n_cols)[None, :]
        x = tl.load(x_ptr + row_start[:, None] + cols[None, :], mask=mask, other=0.0)
        centred = tl.where(mask, x.to(tl.float32) - mean[:, None], 0.0)
        squares += centred * centred
    result = tl.sum(squares, axis=1) / divisor
    if TAKE_SQRT:
        result = tl.sqrt(result)
    tl.store(out_ptr + rows, result.to(out_ptr.dtype.element_ty), mask=row_mask)


def _tile(n_rows: int, n_cols: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N): whole short rows per step, several rows per program when they fit."""
    block_n = min(triton.next_power_of_2(max(n_cols, 1)), MAX_TILE)
    block_m = min(MAX_TILE // block_n, triton.next_power_of_2(n_rows))
    return block_m, block_n


def kernel(x: torch.Tensor, dim: int, correction: int = 1, keepdim: bool = False) -> torch.Tensor:
    rows = x.movedim(dim, -1).contiguous()
    n_cols = rows.shape[-1]
    out = torch.empty(rows.shape[:-1], dtype=x.dtype, device=x.device)
    n_rows = out.numel()
    if n_rows:
        block_m, block_n = _tile(n_rows, n_cols)
        # A divisor of 0 gives inf or NaN, as torch does (with a warning) for n <= correction.
        divisor = float(max(n_cols - correction, 0))
        _var_rows_kernel[(triton.cdiv(n_rows, block_m),)](
            rows, out, n_rows, n_cols, divisor, TAKE_SQRT=__TAKE_SQRT__,
            BLOCK_M=block_m, BLOCK_N=block_n)
    return out.unsqueeze(dim) if keepdim else out
