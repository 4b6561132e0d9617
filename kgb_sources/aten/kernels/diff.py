# torch.diff(x, n=1, dim=dim): out[..., i, ...] = x[..., i + 1, ...] - x[..., i, ...] along dim,
# which shrinks by one. The dim is moved last and made contiguous, so each row of a
# (rows, n_cols) matrix gives n_cols - 1 differences; the subtraction is done in fp32 and
# rounded once, which equals torch's rounded result.
import torch
import triton
import triton.language as tl

# Elements one program touches per step: small enough for the interpreter, fine on a GPU.
MAX_TILE = 1024


@triton.jit
def _diff_rows_kernel(x_ptr, out_ptr, n_rows, n_cols,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n_rows
    in_start = rows.to(tl.int64) * n_cols
    out_start = rows.to(tl.int64) * (n_cols - 1)
    for start in range(0, n_cols - 1, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols < n_cols - 1)[None, :]
        left = tl.load(x_ptr + in_start[:, None] + cols[None, :], mask=mask, other=0.0)
        right = tl.load(x_ptr + in_start[:, None] + cols[None, :] + 1, mask=mask, other=0.0)
        result = right.to(tl.float32) - left.to(tl.float32)
        tl.store(out_ptr + out_start[:, None] + cols[None, :],
                 result.to(out_ptr.dtype.element_ty), mask=mask)


def _tile(n_rows: int, n_cols: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N): whole short rows per step, several rows per program when they fit."""
    block_n = min(triton.next_power_of_2(max(n_cols, 1)), MAX_TILE)
    block_m = min(MAX_TILE // block_n, triton.next_power_of_2(max(n_rows, 1)))
    return block_m, block_n


def kernel(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    rows = x.movedim(dim, -1).contiguous()
    n_cols = rows.shape[-1]
    out = torch.empty((*rows.shape[:-1], max(n_cols - 1, 0)), dtype=x.dtype, device=x.device)
    n_rows = rows.numel() // n_cols if n_cols else 0
    if n_rows and n_cols > 1:
        block_m, block_n = _tile(n_rows, n_cols - 1)
        _diff_rows_kernel[(triton.cdiv(n_rows, block_m),)](
            rows, out, n_rows, n_cols, BLOCK_M=block_m, BLOCK_N=block_n)
    return out.movedim(-1, dim)
