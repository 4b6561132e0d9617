# __NAME__: C = alpha * A @ B + beta * C (side "L", A m x m) or C = alpha * B @ A + beta * C
# (side "R", A n x n) for a symmetric A (complex symmetric, A = A^T, not Hermitian, in the C
# variant) of which only the uplo triangle is read: the other triangle holds unrelated values.
# B and C are m x n. Buffers are column-major 1-D tensors, element (i, j) at buf[i + j * ld];
# complex buffers interleave real and imaginary parts.
#
# Side "R" is side "L" transposed: C^T = alpha * A^T @ B^T + beta * C^T = alpha * A @ B^T +
# beta * C^T, since A^T = A. So the kernel computes one form, C' = alpha * S @ B' + beta * C'
# with S the K x K symmetric matrix, on views of B and C given by their row and column
# strides (B' = B^T and C' = C^T for side "R" are only swapped strides).
# One program computes a BLOCK_M x BLOCK_N tile of C'. Each S tile is one gathered load:
# S(i, l) is A(i, l) when (i, l) is in the stored triangle and A(l, i) otherwise, so the
# load never touches the other triangle. When beta == 0, C is not read (cuBLAS: C need not be
# set), so NaN in it cannot reach the output.
import torch
import triton
import triton.language as tl

IS_COMPLEX = __IS_COMPLEX__


@triton.jit
def _symm_kernel(a_ptr, b_ptr, c_ptr, K, N, lda, stride_bk, stride_bn, stride_cm, stride_cn,
                 alpha_r, alpha_i, beta_r, beta_i,
                 UPPER: tl.constexpr, COMPLEX: tl.constexpr, BETA_ZERO: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr):
    # Grouped tile order: GROUP_M row-tiles share each column-tile of B' while it is in L2.
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
    acc_r = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_i = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K).to(tl.int64)
        k_ok = offs_k < K
        # Stored triangle: uplo "U" holds i <= l, "L" holds i >= l.
        if UPPER:
            stored = offs_m[:, None] <= offs_k[None, :]
        else:
            stored = offs_m[:, None] >= offs_k[None, :]
        idx = tl.where(stored, offs_m[:, None] + offs_k[None, :] * lda,
                       offs_k[None, :] + offs_m[:, None] * lda)
        s_mask = m_ok[:, None] & k_ok[None, :]
        b_mask = k_ok[:, None] & n_ok[None, :]
        b_idx = offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        if COMPLEX:
            sr = tl.load(a_ptr + 2 * idx, mask=s_mask, other=0.0)
            # The mirrored element as it is, not conjugated: A is symmetric, not Hermitian.
            si = tl.load(a_ptr + 2 * idx + 1, mask=s_mask, other=0.0)
            br = tl.load(b_ptr + b_idx, mask=b_mask, other=0.0)
            bi = tl.load(b_ptr + b_idx + 1, mask=b_mask, other=0.0)
            # (sr + i si)(br + i bi) = (sr br - si bi) + i (sr bi + si br)
            acc_r = tl.dot(sr, br, acc_r, input_precision="ieee")
            acc_r = tl.dot(-si, bi, acc_r, input_precision="ieee")
            acc_i = tl.dot(sr, bi, acc_i, input_precision="ieee")
            acc_i = tl.dot(si, br, acc_i, input_precision="ieee")
        else:
            s = tl.load(a_ptr + idx, mask=s_mask, other=0.0)
            b = tl.load(b_ptr + b_idx, mask=b_mask, other=0.0)
            # "ieee": cuBLAS's Ssymm is exact fp32 (no TF32).
            acc_r = tl.dot(s, b, acc_r, input_precision="ieee")

    c_mask = m_ok[:, None] & n_ok[None, :]
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    if COMPLEX:
        out_r = alpha_r * acc_r - alpha_i * acc_i
        out_i = alpha_r * acc_i + alpha_i * acc_r
        if not BETA_ZERO:
            cr = tl.load(c_ptrs, mask=c_mask, other=0.0)
            ci = tl.load(c_ptrs + 1, mask=c_mask, other=0.0)
            out_r += beta_r * cr - beta_i * ci
            out_i += beta_r * ci + beta_i * cr
        tl.store(c_ptrs, out_r, mask=c_mask)
        tl.store(c_ptrs + 1, out_i, mask=c_mask)
    else:
        out = alpha_r * acc_r
        if not BETA_ZERO:
            out += beta_r * tl.load(c_ptrs, mask=c_mask, other=0.0)
        tl.store(c_ptrs, out, mask=c_mask)


def _tiles(device_type: str) -> tuple[int, int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_warps); small tiles on the interpreter."""
    if device_type != "cuda":
        return 32, 32, 32, 4
    return (64, 64, 32, 8) if IS_COMPLEX else (128, 128, 32, 8)


def kernel(side: str, uplo: str, m: int, n: int, alpha, A: torch.Tensor, lda: int,
           B: torch.Tensor, ldb: int, beta, C: torch.Tensor, ldc: int) -> None:
    if uplo not in ("U", "L"):
        raise ValueError(f"uplo must be U or L, not {uplo!r}")
    if m <= 0 or n <= 0:
        return None
    scale = 2 if IS_COMPLEX else 1  # strides in reals
    if side == "L":  # C = S @ B: K = m rows of C, walked down B's columns
        rows, cols = m, n
        stride_bk, stride_bn, stride_cm, stride_cn = 1, ldb, 1, ldc
    elif side == "R":  # C^T = S @ B^T: the transposed views swap the strides
        rows, cols = n, m
        stride_bk, stride_bn, stride_cm, stride_cn = ldb, 1, ldc, 1
    else:
        raise ValueError(f"side must be L or R, not {side!r}")
    alpha, beta = complex(alpha), complex(beta)
    block_m, block_n, block_k, warps = _tiles(C.device.type)
    grid = (triton.cdiv(rows, block_m) * triton.cdiv(cols, block_n),)
    _symm_kernel[grid](
        A, B, C, rows, cols, lda, stride_bk * scale, stride_bn * scale, stride_cm * scale,
        stride_cn * scale, alpha.real, alpha.imag, beta.real, beta.imag,
        UPPER=uplo == "U", COMPLEX=IS_COMPLEX, BETA_ZERO=beta == 0,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8, num_warps=warps)
    return None
