# cublasStrmm_v2, cuBLAS's out-of-place form: C = alpha * op(A) @ B (side "L", A m x m) or
# C = alpha * B @ op(A) (side "R", A n x n) for a triangular A of which only the uplo triangle
# is read; diag "U": A's diagonal is taken as ones and never read. B and C are m x n; C is
# written, never read, and B stays as it was. Buffers are column-major 1-D tensors, element
# (i, j) at buf[i + j * ld].
#
# Side "R" is side "L" transposed: C^T = alpha * op(A)^T @ B^T. So the kernel computes one
# form, C' = alpha * T @ B' with T a K x K triangular matrix given by its element strides
# (T = op(A) for side "L", op(A)^T for side "R"; a transpose only swaps the strides and flips
# which triangle T has) and B', C' views of B and C given by their row and column strides.
# One program computes a BLOCK_M x BLOCK_N tile of C', walking only the k blocks where its
# rows of T are nonzero (k >= i for an upper T, k <= i for a lower one).
import torch
import triton
import triton.language as tl


@triton.jit
def _trmm_kernel(a_ptr, b_ptr, c_ptr, K, N, stride_tm, stride_tk, stride_bk, stride_bn,
                 stride_cm, stride_cn, alpha,
                 UPPER: tl.constexpr, UNIT: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(K, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_in_group = GROUP_M * tiles_n
    first_m = (pid // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_in_group) % group_rows
    pid_n = (pid % tiles_in_group) // group_rows

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    m_ok = offs_m < K
    n_ok = offs_n < N
    if UPPER:
        k_lo = pid_m * BLOCK_M
        k_hi = K
    else:
        k_lo = 0
        k_hi = min(pid_m * BLOCK_M + BLOCK_M, K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(k_lo, k_hi, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K).to(tl.int64)
        k_ok = offs_k < K
        if UPPER:
            tri = offs_m[:, None] <= offs_k[None, :]
        else:
            tri = offs_m[:, None] >= offs_k[None, :]
        on_diagonal = offs_m[:, None] == offs_k[None, :]
        if UNIT:
            tri = tri & (offs_m[:, None] != offs_k[None, :])
        t_mask = m_ok[:, None] & k_ok[None, :] & tri
        t = tl.load(a_ptr + offs_m[:, None] * stride_tm + offs_k[None, :] * stride_tk,
                    mask=t_mask, other=0.0)
        if UNIT:
            t = tl.where(on_diagonal, 1.0, t)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        # "ieee": cuBLAS's Strmm is exact fp32 (no TF32).
        acc = tl.dot(t, b, acc, input_precision="ieee")
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, alpha * acc, mask=m_ok[:, None] & n_ok[None, :])


def kernel(side: str, uplo: str, trans: str, diag: str, m: int, n: int, alpha: float,
           A: torch.Tensor, lda: int, B: torch.Tensor, ldb: int, C: torch.Tensor,
           ldc: int) -> None:
    if uplo not in ("U", "L") or diag not in ("N", "U") or trans not in ("N", "T", "C"):
        raise ValueError(f"bad flags uplo={uplo!r} trans={trans!r} diag={diag!r}")
    if m <= 0 or n <= 0:
        return None
    # op(A)(i, l) = A[i * stride_r + l * stride_c]; op(A) is upper for (U, N) and (L, T).
    stride_r, stride_c = (1, lda) if trans == "N" else (lda, 1)
    op_upper = (uplo == "U") == (trans == "N")
    if side == "L":  # C = op(A) @ B
        rows, cols, upper = m, n, op_upper
        stride_tm, stride_tk = stride_r, stride_c
        stride_bk, stride_bn, stride_cm, stride_cn = 1, ldb, 1, ldc
    elif side == "R":  # C^T = op(A)^T @ B^T
        rows, cols, upper = n, m, not op_upper
        stride_tm, stride_tk = stride_c, stride_r
        stride_bk, stride_bn, stride_cm, stride_cn = ldb, 1, ldc, 1
    else:
        raise ValueError(f"side must be L or R, not {side!r}")
    if C.device.type == "cuda":
        block_m, block_n, block_k, warps = 128, 128, 32, 8
    else:
        block_m, block_n, block_k, warps = 32, 32, 32, 4
    grid = (triton.cdiv(rows, block_m) * triton.cdiv(cols, block_n),)
    _trmm_kernel[grid](
        A, B, C, rows, cols, stride_tm, stride_tk, stride_bk, stride_bn, stride_cm, stride_cn,
        float(alpha), UPPER=upper, UNIT=diag == "U", BLOCK_M=block_m, BLOCK_N=block_n,
        BLOCK_K=block_k, GROUP_M=8, num_warps=warps)
    return None
