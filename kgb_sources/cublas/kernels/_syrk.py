# cuBLAS syrk / syr2k on the uplo triangle of the n x n matrix C:
#   syrk:  C = alpha * op(A) @ op(A)^T + beta * C
#   syr2k: C = alpha * (op(A) @ op(B)^T + op(B) @ op(A)^T) + beta * C
# with op(X) n x k: X stored n x k (trans "N") or k x n (trans "T", op(X) = X^T). Only C's
# uplo triangle (uplo "U": i <= j, "L": i >= j) is read and written; the other triangle and
# the padding rows between n and ldc stay untouched. Complex routines transpose without
# conjugating (syrk, not herk). Buffers are column-major 1-D tensors, element (i, j) at
# buf[i + j * ld]; complex buffers interleave real and imaginary parts.
#
# One program computes one BLOCK x BLOCK tile of C; tiles wholly outside the triangle do
# nothing. The tile's left operand is op(A)'s rows i, its right operand op(A)'s rows j read as
# columns (op(A)^T), both through the buffer's two strides (syr2k adds op(A) op(B)^T and
# op(B) op(A)^T the same way). When beta == 0, C is
# not read (cuBLAS: C need not be set), so NaN in it cannot reach the output.
import torch
import triton
import triton.language as tl

IS_COMPLEX = __COMPLEX__


@triton.jit
def _product(acc_r, acc_i, x_ptr, y_ptr, rows, cols, offs_k, k_ok, row_ok, col_ok,
             stride_xn, stride_xk, stride_yn, stride_yk, COMPLEX: tl.constexpr):
    """acc + op(X)[rows, k] @ op(Y)[cols, k]^T for one k block (complex: no conjugation)."""
    x_idx = rows[:, None] * stride_xn + offs_k[None, :] * stride_xk
    y_idx = offs_k[:, None] * stride_yk + cols[None, :] * stride_yn
    x_mask = row_ok[:, None] & k_ok[None, :]
    y_mask = k_ok[:, None] & col_ok[None, :]
    xr = tl.load(x_ptr + x_idx, mask=x_mask, other=0.0)
    yr = tl.load(y_ptr + y_idx, mask=y_mask, other=0.0)
    # "ieee": cuBLAS's Ssyrk is exact fp32 (no TF32).
    acc_r = tl.dot(xr, yr, acc_r, input_precision="ieee")
    if COMPLEX:
        xi = tl.load(x_ptr + x_idx + 1, mask=x_mask, other=0.0)
        yi = tl.load(y_ptr + y_idx + 1, mask=y_mask, other=0.0)
        acc_r = tl.dot(-xi, yi, acc_r, input_precision="ieee")
        acc_i = tl.dot(xr, yi, acc_i, input_precision="ieee")
        acc_i = tl.dot(xi, yr, acc_i, input_precision="ieee")
    return acc_r, acc_i


@triton.jit
def _syrk_kernel(a_ptr, b_ptr, c_ptr, N, K, stride_an, stride_ak, stride_bn, stride_bk, ldc,
                 alpha_r, alpha_i, beta_r, beta_i,
                 UPPER: tl.constexpr, COMPLEX: tl.constexpr, RANK_2K: tl.constexpr,
                 BETA_ZERO: tl.constexpr, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    # A tile has an element in the triangle unless it lies wholly on the other side.
    if UPPER:
        active = pid_m <= pid_n
    else:
        active = pid_m >= pid_n
    if active:
        rows = (pid_m * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
        cols = (pid_n * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
        row_ok = rows < N
        col_ok = cols < N
        acc_r = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        acc_i = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            offs_k = k0 + tl.arange(0, BLOCK_K).to(tl.int64)
            k_ok = offs_k < K
            acc_r, acc_i = _product(acc_r, acc_i, a_ptr, b_ptr, rows, cols, offs_k, k_ok,
                                    row_ok, col_ok, stride_an, stride_ak, stride_bn, stride_bk,
                                    COMPLEX)
            if RANK_2K:
                acc_r, acc_i = _product(acc_r, acc_i, b_ptr, a_ptr, rows, cols, offs_k, k_ok,
                                        row_ok, col_ok, stride_bn, stride_bk, stride_an,
                                        stride_ak, COMPLEX)
        if UPPER:
            tri = rows[:, None] <= cols[None, :]
        else:
            tri = rows[:, None] >= cols[None, :]
        c_mask = row_ok[:, None] & col_ok[None, :] & tri
        if COMPLEX:
            c_ptrs = c_ptr + 2 * (rows[:, None] + cols[None, :] * ldc)
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
            c_ptrs = c_ptr + rows[:, None] + cols[None, :] * ldc
            out = alpha_r * acc_r
            if not BETA_ZERO:
                out += beta_r * tl.load(c_ptrs, mask=c_mask, other=0.0)
            tl.store(c_ptrs, out, mask=c_mask)


def _strides(trans: str, ld: int) -> tuple[int, int]:
    """op(X)(i, l) = X[i * stride_n + l * stride_k]: X is n x k for "N", k x n for "T".
    Complex syrk takes only N and T (op = C would make it herk); real routines take C as T."""
    if trans == "N":
        return 1, ld
    if trans == "T" or (trans == "C" and not IS_COMPLEX):
        return ld, 1
    raise ValueError(f"trans must be N or T, not {trans!r}")


def _launch(uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc, rank_2k):
    if uplo not in ("U", "L"):
        raise ValueError(f"uplo must be U or L, not {uplo!r}")
    stride_an, stride_ak = _strides(trans, lda)
    stride_bn, stride_bk = _strides(trans, ldb)
    if n <= 0:
        return None
    scale = 2 if IS_COMPLEX else 1  # strides in reals
    alpha, beta = complex(alpha), complex(beta)
    if C.device.type == "cuda":
        block, block_k, warps = (64, 32, 8) if IS_COMPLEX else (128, 32, 8)
    else:
        block, block_k, warps = 32, 32, 4
    tiles = triton.cdiv(n, block)
    _syrk_kernel[(tiles, tiles)](
        A, B, C, n, k, stride_an * scale, stride_ak * scale, stride_bn * scale,
        stride_bk * scale, ldc, alpha.real, alpha.imag, beta.real, beta.imag,
        UPPER=uplo == "U", COMPLEX=IS_COMPLEX, RANK_2K=rank_2k, BETA_ZERO=beta == 0,
        BLOCK=block, BLOCK_K=block_k, num_warps=warps)
    return None


def syrk(uplo: str, trans: str, n: int, k: int, alpha, A: torch.Tensor, lda: int, beta,
         C: torch.Tensor, ldc: int) -> None:
    return _launch(uplo, trans, n, k, alpha, A, lda, A, lda, beta, C, ldc, False)


def syr2k(uplo: str, trans: str, n: int, k: int, alpha, A: torch.Tensor, lda: int,
          B: torch.Tensor, ldb: int, beta, C: torch.Tensor, ldc: int) -> None:
    return _launch(uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc, True)


def syrk_ex(uplo: str, trans: str, n: int, k: int, alpha, A: torch.Tensor, Atype: str,
            lda: int, beta, C: torch.Tensor, Ctype: str, ldc: int) -> None:
    # The type arguments name the buffers' element types (CUDA_C_32F: complex64 held as
    # interleaved float32 pairs); the tensors carry them already, so they only have to agree.
    for buf, name in ((A, Atype), (C, Ctype)):
        if name != "CUDA_C_32F" or buf.dtype != torch.float32:
            raise ValueError(f"a {buf.dtype} buffer passed as {name}; this kernel takes "
                             f"CUDA_C_32F (interleaved float32) A and C")
    return _launch(uplo, trans, n, k, alpha, A, lda, A, lda, beta, C, ldc, False)


kernel = __ENTRY__
