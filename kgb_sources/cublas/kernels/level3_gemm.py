# cuBLAS gemm: C = alpha * op(A) @ op(B) + beta * C on column-major 1-D buffers with leading
# dimensions, one batch of matrices per program column (strided or pointer-array batches).
# op(A) is m x k, op(B) is k x n; A is stored m x k when transa == "N", else k x m (so a
# transpose is only a swap of the two strides); "C" also conjugates. Complex buffers hold
# real and imaginary parts interleaved, so a complex product is four real tl.dot products.
# One program computes one BLOCK_M x BLOCK_N tile of C with a float32 (float64 for D/Z)
# accumulator; when beta == 0, C is not read (cuBLAS: "C need not be set"), so NaN in it
# cannot reach the output. Padding rows m..ldc-1 are masked out of every store.
import torch
import triton
import triton.language as tl

IS_COMPLEX = __COMPLEX__


@triton.jit
def _mac(acc, a, b, FP64: tl.constexpr):
    """acc + a @ b. fp64 as a broadcast multiply and sum over k (FMAs), not tl.dot."""
    # if/else, not an early return: Triton's compiler still compiles the statements after a
    # constexpr branch that returns (as dead code), and tl.dot on fp64 does not compile.
    if FP64:
        acc = acc + tl.sum(a[:, :, None] * b[None, :, :], axis=1)
    else:
        # "ieee": cuBLAS's Sgemm is exact fp32 (no TF32); fp16 dots use tensor cores anyway.
        acc = tl.dot(a, b, acc, input_precision="ieee")
    return acc


@triton.jit
def _gemm_kernel(a_ptr, b_ptr, c_ptr, a_array, b_array, c_array, M, N, K,
                 stride_am, stride_ak, stride_bk, stride_bn, stride_cn,
                 batch_stride_a, batch_stride_b, batch_stride_c,
                 alpha_r, alpha_i, beta_r, beta_i,
                 COMPLEX: tl.constexpr, CONJ_A: tl.constexpr, CONJ_B: tl.constexpr,
                 BETA_ZERO: tl.constexpr, POINTER_ARRAYS: tl.constexpr, FP64: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr):
    # Grouped tile order: GROUP_M row-tiles share each column-tile of B while it is in L2.
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_in_group = GROUP_M * tiles_n
    first_m = (pid // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_in_group) % group_rows
    pid_n = (pid % tiles_in_group) // group_rows

    if POINTER_ARRAYS:
        # Batched (not strided): the batch's matrices are wherever its pointers say.
        a_base = tl.load(a_array + batch).to(a_ptr.dtype)
        b_base = tl.load(b_array + batch).to(b_ptr.dtype)
        c_base = tl.load(c_array + batch).to(c_ptr.dtype)
    else:
        a_base = a_ptr + batch * batch_stride_a
        b_base = b_ptr + batch * batch_stride_b
        c_base = c_ptr + batch * batch_stride_c

    # 64-bit offsets: the _64 routines may address more than 2^31 elements.
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K).to(tl.int64)
    # Strides are in reals (doubled on the host for complex buffers).
    a_ptrs = a_base + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_base + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    if FP64:
        acc_r = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float64)
        acc_i = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float64)
    else:
        acc_r = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        acc_i = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - kk * BLOCK_K
        a_mask = (offs_m[:, None] < M) & (offs_k[None, :] < k_left)
        b_mask = (offs_k[:, None] < k_left) & (offs_n[None, :] < N)
        ar = tl.load(a_ptrs, mask=a_mask, other=0.0)
        br = tl.load(b_ptrs, mask=b_mask, other=0.0)
        acc_r = _mac(acc_r, ar, br, FP64)
        if COMPLEX:
            ai = tl.load(a_ptrs + 1, mask=a_mask, other=0.0)
            bi = tl.load(b_ptrs + 1, mask=b_mask, other=0.0)
            if CONJ_A:
                ai = -ai
            if CONJ_B:
                bi = -bi
            # (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br)
            acc_r = _mac(acc_r, -ai, bi, FP64)
            acc_i = _mac(acc_i, ar, bi, FP64)
            acc_i = _mac(acc_i, ai, br, FP64)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if COMPLEX:
        c_ptrs = c_base + offs_m[:, None] * 2 + offs_n[None, :] * stride_cn
        out_r = alpha_r * acc_r - alpha_i * acc_i
        out_i = alpha_r * acc_i + alpha_i * acc_r
        if not BETA_ZERO:
            cr = tl.load(c_ptrs, mask=c_mask, other=0.0)
            ci = tl.load(c_ptrs + 1, mask=c_mask, other=0.0)
            out_r += beta_r * cr - beta_i * ci
            out_i += beta_r * ci + beta_i * cr
        tl.store(c_ptrs, out_r.to(c_ptr.dtype.element_ty), mask=c_mask)
        tl.store(c_ptrs + 1, out_i.to(c_ptr.dtype.element_ty), mask=c_mask)
    else:
        c_ptrs = c_base + offs_m[:, None] + offs_n[None, :] * stride_cn
        out = alpha_r * acc_r
        if not BETA_ZERO:
            out += beta_r * tl.load(c_ptrs, mask=c_mask, other=0.0).to(acc_r.dtype)
        tl.store(c_ptrs, out.to(c_ptr.dtype.element_ty), mask=c_mask)


def _tiles(m: int, dtype: torch.dtype, device_type: str) -> tuple[int, int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_warps). tl.dot needs every dim >= 16; decode-like
    m <= 16 wastes less with BLOCK_M=16 and narrow column tiles (more programs)."""
    if dtype == torch.float64:  # FMA path (see _mac): a BLOCK_M x BLOCK_K x BLOCK_N product
        return (32, 32, 8, 4) if device_type == "cuda" else (16 if m <= 16 else 32, 32, 16, 4)
    if device_type != "cuda":
        return (16 if m <= 16 else 32), 32, 32, 4
    if m <= 16:
        return 16, 32, 128 if dtype in (torch.float16, torch.bfloat16) else 64, 4
    if dtype in (torch.float16, torch.bfloat16):
        return 128, 128, 64, 8
    if IS_COMPLEX:
        return 64, 64, 32, 8
    return 128, 128, 32, 8


def _strides(trans: str, ld: int, scale: int) -> tuple[int, int]:
    """(stride along op(X)'s rows, stride along its columns) in reals: a stored-transposed
    matrix (trans "T" or "C") swaps them."""
    if trans not in ("N", "T", "C"):
        raise ValueError(f"trans must be N, T or C, not {trans!r}")
    return (scale, ld * scale) if trans == "N" else (ld * scale, scale)


def _launch(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, *,
            batch=1, stride_a=0, stride_b=0, stride_c=0, arrays=None):
    if m <= 0 or n <= 0 or batch <= 0:
        return
    scale = 2 if IS_COMPLEX else 1
    stride_am, stride_ak = _strides(transa, lda, scale)
    stride_bk, stride_bn = _strides(transb, ldb, scale)
    alpha, beta = complex(alpha), complex(beta)
    block_m, block_n, block_k, warps = _tiles(m, b.dtype, c.device.type)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), batch)
    a_array, b_array, c_array = arrays if arrays is not None else (c, c, c)
    _gemm_kernel[grid](
        a, b, c, a_array, b_array, c_array, m, n, k,
        stride_am, stride_ak, stride_bk, stride_bn, ldc * scale,
        stride_a * scale, stride_b * scale, stride_c * scale,
        alpha.real, alpha.imag, beta.real, beta.imag,
        COMPLEX=IS_COMPLEX, CONJ_A=transa == "C" and IS_COMPLEX,
        CONJ_B=transb == "C" and IS_COMPLEX, BETA_ZERO=beta == 0,
        POINTER_ARRAYS=arrays is not None, FP64=c.dtype == torch.float64,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8, num_warps=warps)


def gemm(transa: str, transb: str, m: int, n: int, k: int, alpha, A: torch.Tensor, lda: int,
         B: torch.Tensor, ldb: int, beta, C: torch.Tensor, ldc: int) -> None:
    _launch(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)


def gemm_ex(transa: str, transb: str, m: int, n: int, k: int, alpha: float, A: torch.Tensor,
            Atype: str, lda: int, B: torch.Tensor, Btype: str, ldb: int, beta: float,
            C: torch.Tensor, Ctype: str, ldc: int) -> None:
    # The type arguments name the buffers' dtypes (fp16/bf16 A and B, fp32 C): the tensors
    # carry them already, so they only have to agree.
    names = {torch.float16: "CUDA_R_16F", torch.bfloat16: "CUDA_R_16BF",
             torch.float32: "CUDA_R_32F"}
    for buf, name in ((A, Atype), (B, Btype), (C, Ctype)):
        if names.get(buf.dtype) != name:
            raise ValueError(f"a {buf.dtype} buffer passed as {name}")
    _launch(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)


def gemm_strided_batched(transa: str, transb: str, m: int, n: int, k: int, alpha,
                         A: torch.Tensor, lda: int, strideA: int, B: torch.Tensor, ldb: int,
                         strideB: int, beta, C: torch.Tensor, ldc: int, strideC: int,
                         batchCount: int) -> None:
    _launch(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch=batchCount,
            stride_a=strideA, stride_b=strideB, stride_c=strideC)


def _pointers(buffers, count: int, device) -> torch.Tensor:
    # cuBLAS's device arrays of pointers (Aarray[i] is batch i's matrix), as int64 addresses.
    return torch.tensor([t.data_ptr() for t in buffers[:count]], dtype=torch.int64,
                        device=device)


def gemm_batched(transa: str, transb: str, m: int, n: int, k: int, alpha, Aarray: list,
                 lda: int, Barray: list, ldb: int, beta, Carray: list, ldc: int,
                 batchCount: int) -> None:
    if batchCount <= 0:
        return
    device = Carray[0].device
    arrays = tuple(_pointers(x, batchCount, device) for x in (Aarray, Barray, Carray))
    _launch(transa, transb, m, n, k, alpha, Aarray[0], lda, Barray[0], ldb, beta, Carray[0],
            ldc, batch=batchCount, arrays=arrays)


kernel = __ENTRY__
