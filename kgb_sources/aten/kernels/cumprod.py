# torch.cumprod(x, dim), same shape and dtype as x. The scanned dim is moved last and made
# contiguous, so each row of a (rows, n_cols) matrix is scanned on its own. A program scans
# BLOCK_M rows in BLOCK_N chunks: tl.cumprod inside a chunk, times an fp32 running product
# carried from the chunks before, so rows of any length work; fp16/bf16 are accumulated in fp32.
#
# The carry is the chunk's last prefix, picked out of the tile, not a loop-carried reduction:
# on Triton 3.6 (H200) that loop-carried 2-D sum of fp32 aborts compilation (assertion
# `loopResult.hasOneUse()` in TritonGPUOptimizeThreadLocality, "PassManager::run failed").
# Only full chunks pass their carry on, so their last column is always a real element.
import torch
import triton
import triton.language as tl

# Elements one program touches per step: small enough for the interpreter, fine on a GPU.
MAX_TILE = 1024


@triton.jit
def _cumprod_rows_kernel(x_ptr, out_ptr, n_rows, n_cols,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n_rows
    row_start = rows.to(tl.int64) * n_cols
    last_column = (tl.arange(0, BLOCK_N) == BLOCK_N - 1)[None, :]
    carry = tl.full((BLOCK_M,), 1.0, dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols < n_cols)[None, :]
        offsets = row_start[:, None] + cols[None, :]
        x = tl.load(x_ptr + offsets, mask=mask, other=1.0).to(tl.float32)
        prefix = tl.cumprod(x, axis=1) * carry[:, None]
        tl.store(out_ptr + offsets, prefix.to(out_ptr.dtype.element_ty), mask=mask)
        carry = tl.sum(tl.where(last_column, prefix, 0.0), axis=1)


def _tile(n_rows: int, n_cols: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N): whole short rows per step, several rows per program when they fit."""
    block_n = min(triton.next_power_of_2(max(n_cols, 1)), MAX_TILE)
    block_m = min(MAX_TILE // block_n, triton.next_power_of_2(n_rows))
    return block_m, block_n


def kernel(x: torch.Tensor, dim: int) -> torch.Tensor:
    rows = x.movedim(dim, -1).contiguous()
    out = torch.empty_like(rows)
    n_cols = rows.shape[-1]
    n_rows = rows.numel() // n_cols if n_cols else 0
    if n_rows:
        block_m, block_n = _tile(n_rows, n_cols)
        _cumprod_rows_kernel[(triton.cdiv(n_rows, block_m),)](
            rows, out, n_rows, n_cols, BLOCK_M=block_m, BLOCK_N=block_n)
    return out.movedim(-1, dim)
