# torch.argmin(x, dim), keepdim=False, int64 indices. The reduced dim is moved last and made
# contiguous, so each output element is one row of a (rows, n_cols) matrix. A program scans
# BLOCK_M rows in BLOCK_N chunks, keeping each row's best value and index. Ties go to the first
# index, as in torch: within a chunk the smallest column holding the chunk's minimum is taken,
# and a later chunk replaces the running best only when strictly smaller.
import torch
import triton
import triton.language as tl

# Elements one program touches per step: small enough for the interpreter, fine on a GPU.
MAX_TILE = 1024


@triton.jit
def _argmin_rows_kernel(x_ptr, out_ptr, n_rows, n_cols,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n_rows
    row_start = rows.to(tl.int64) * n_cols
    best_value = tl.full((BLOCK_M,), float("inf"), dtype=tl.float32)
    best_index = tl.zeros((BLOCK_M,), dtype=tl.int32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols < n_cols)[None, :]
        x = tl.load(x_ptr + row_start[:, None] + cols[None, :], mask=mask, other=float("inf"))
        x = x.to(tl.float32)
        chunk_min = tl.min(x, axis=1)
        # Padding is never a candidate: an all +inf row keeps index 0, as torch returns.
        is_min = (x == chunk_min[:, None]) & mask
        chunk_index = tl.min(tl.where(is_min, cols[None, :], n_cols), axis=1)
        better = chunk_min < best_value
        best_index = tl.where(better, chunk_index, best_index)
        best_value = tl.where(better, chunk_min, best_value)
    tl.store(out_ptr + rows, best_index.to(tl.int64), mask=row_mask)


def _tile(n_rows: int, n_cols: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N): whole short rows per step, several rows per program when they fit."""
    block_n = min(triton.next_power_of_2(max(n_cols, 1)), MAX_TILE)
    block_m = min(MAX_TILE // block_n, triton.next_power_of_2(n_rows))
    return block_m, block_n


def kernel(x: torch.Tensor, dim: int) -> torch.Tensor:
    rows = x.movedim(dim, -1).contiguous()
    n_cols = rows.shape[-1]
    out = torch.empty(rows.shape[:-1], dtype=torch.int64, device=x.device)
    n_rows = out.numel()
    if n_rows:
        block_m, block_n = _tile(n_rows, n_cols)
        _argmin_rows_kernel[(triton.cdiv(n_rows, block_m),)](
            rows, out, n_rows, n_cols, BLOCK_M=block_m, BLOCK_N=block_n)
    return out
