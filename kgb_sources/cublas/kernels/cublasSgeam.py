# cuBLAS geam: C = alpha * op(A) + beta * op(B), all m x n, on column-major 1-D buffers. A
# transpose is a swap of the two strides of the stored matrix; C is written, never read, and
# its padding rows m..ldc-1 are masked out. One program writes one BLOCK_M x BLOCK_N tile.
import torch
import triton
import triton.language as tl


@triton.jit
def _geam_kernel(a_ptr, b_ptr, c_ptr, M, N, alpha, beta,
                 stride_am, stride_an, stride_bm, stride_bn, ldc,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_n[None, :] * stride_an, mask=mask)
    b = tl.load(b_ptr + offs_m[:, None] * stride_bm + offs_n[None, :] * stride_bn, mask=mask)
    tl.store(c_ptr + offs_m[:, None] + offs_n[None, :] * ldc, alpha * a + beta * b, mask=mask)


def _strides(trans: str, ld: int) -> tuple[int, int]:
    if trans not in ("N", "T", "C"):
        raise ValueError(f"trans must be N, T or C, not {trans!r}")
    return (1, ld) if trans == "N" else (ld, 1)


def kernel(transa: str, transb: str, m: int, n: int, alpha: float, A: torch.Tensor, lda: int,
           beta: float, B: torch.Tensor, ldb: int, C: torch.Tensor, ldc: int) -> None:
    if m <= 0 or n <= 0:
        return
    stride_am, stride_an = _strides(transa, lda)
    stride_bm, stride_bn = _strides(transb, ldb)
    block_m, block_n = (64, 64) if C.device.type == "cuda" else (32, 32)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    _geam_kernel[grid](A, B, C, m, n, float(alpha), float(beta), stride_am, stride_an,
                       stride_bm, stride_bn, ldc, BLOCK_M=block_m, BLOCK_N=block_n)
