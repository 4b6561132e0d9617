# cuBLAS dgmm: C = A @ diag(x) (side "R": column j scaled by x[j]) or diag(x) @ A (side "L":
# row i scaled by x[i]) on column-major 1-D buffers; x's element i is x[i * incx]. C is written,
# never read; its padding rows m..ldc-1 are masked out.
import torch
import triton
import triton.language as tl


@triton.jit
def _dgmm_kernel(a_ptr, x_ptr, c_ptr, M, N, lda, incx, ldc, SIDE_RIGHT: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    a = tl.load(a_ptr + offs_m[:, None] + offs_n[None, :] * lda, mask=mask)
    if SIDE_RIGHT:
        scale = tl.load(x_ptr + offs_n * incx, mask=offs_n < N)[None, :]
    else:
        scale = tl.load(x_ptr + offs_m * incx, mask=offs_m < M)[:, None]
    tl.store(c_ptr + offs_m[:, None] + offs_n[None, :] * ldc, a * scale, mask=mask)


def kernel(side: str, m: int, n: int, A: torch.Tensor, lda: int, x: torch.Tensor, incx: int,
           C: torch.Tensor, ldc: int) -> None:
    if side not in ("L", "R"):
        raise ValueError(f"side must be L or R, not {side!r}")
    if m <= 0 or n <= 0:
        return
    block_m, block_n = (64, 64) if C.device.type == "cuda" else (32, 32)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    _dgmm_kernel[grid](A, x, C, m, n, lda, incx, ldc, SIDE_RIGHT=side == "R",
                       BLOCK_M=block_m, BLOCK_N=block_n)
