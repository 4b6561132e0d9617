# op: cublas.cublasSgemm_v2
# expect: wrong_output
# cuBLAS's fp32 GEMM with its operands rounded to fp16 first (a copy, which the recorder allows
# for staging) and the products accumulated in fp32: a tensor-core shortcut's accuracy, which
# the fp32 rounding bound of a sum of products rejects.
import torch
import triton
import triton.language as tl


@triton.jit
def _gemm_column_major(a_ptr, b_ptr, c_ptr, m, n, k, lda, ldb, ldc, sam, sak, sbk, sbn,
                       alpha, beta, BETA_ZERO: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok, col_ok = rows < m, cols < n
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for kk in range(0, k):
        a = tl.load(a_ptr + rows * sam + kk * sak, mask=row_ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + kk * sbk + cols * sbn, mask=col_ok, other=0.0).to(tl.float32)
        acc += a[:, None] * b[None, :]
    where = c_ptr + rows[:, None] + cols[None, :] * ldc
    mask = row_ok[:, None] & col_ok[None, :]
    if BETA_ZERO:
        result = alpha * acc
    else:
        result = alpha * acc + beta * tl.load(where, mask=mask, other=0.0)
    tl.store(where, result, mask=mask)


def kernel(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc):
    if m == 0 or n == 0:
        return None
    a16, b16 = A.to(torch.float16), B.to(torch.float16)
    # op(A)[i, kk] and op(B)[kk, j] in the column-major buffers.
    sam, sak = (1, lda) if transa == "N" else (lda, 1)
    sbk, sbn = (1, ldb) if transb == "N" else (ldb, 1)
    grid = (triton.cdiv(m, 16), triton.cdiv(n, 16))
    _gemm_column_major[grid](a16, b16, C, m, n, k, lda, ldb, ldc, sam, sak, sbk, sbn,
                             float(alpha), float(beta), BETA_ZERO=beta == 0, BLOCK_M=16,
                             BLOCK_N=16)
    return None
