# cuBLAS mixed-precision and cuBLASLt matmuls on column-major 1-D buffers with leading
# dimensions: gemmEx (fp16/bf16 in and out, int8 in, int32 out), cublasLtMatmul with fused
# epilogues (bias, relu, gelu, the pre-activation written to an aux buffer), fp8 e4m3 with
# per-tensor scales, and grouped GEMM over pointer arrays.
# op(A) is m x k, op(B) is k x n; A is stored m x k when transa == "N", else k x m, so a
# transpose is only a swap of the two strides. One program computes one BLOCK_M x BLOCK_N tile
# of the m x n output with an fp32 (int32 for int8) accumulator, applies alpha, beta, the bias
# and the activation in that precision and rounds once when it stores. Rows m..ld-1 of every
# written buffer are padding and are masked out of every store.
import torch
import triton
import triton.language as tl

# Epilogue activations: cuBLASLt's CUBLASLT_EPILOGUE_RELU and _GELU.
NONE, RELU, GELU = 0, 1, 2


@triton.jit
def _gelu_tanh(x):
    # cuBLASLt's GELU is the tanh approximation (torch computes the same epilogue with
    # gelu(approximate="tanh") where it cannot fuse it): 0.5 x (1 + tanh(u)),
    # u = sqrt(2 / pi) (x + 0.044715 x^3). With tanh(u) = 2 sigmoid(2u) - 1 that is
    # x * sigmoid(2u); tl.math.tanh is missing in Triton 3.9's interpreter.
    # 2u is clamped to +-80, where sigmoid is 0 or 1 in fp32 anyway, so exp cannot overflow.
    two_u = 2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return x * tl.sigmoid(tl.minimum(tl.maximum(two_u, -80.0), 80.0))


@triton.jit
def _tile_of(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    # Grouped tile order: GROUP_M row-tiles share each column-tile of B while it is in L2.
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_in_group = GROUP_M * tiles_n
    first_m = (pid // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_in_group) % group_rows
    pid_n = (pid % tiles_in_group) // group_rows
    return pid_m, pid_n


@triton.jit
def _product(a_base, b_base, offs_m, offs_n, M, N, K, stride_am, stride_ak, stride_bk,
             stride_bn, INTEGER: tl.constexpr, FP8: tl.constexpr, UPCAST: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """op(A) @ op(B) for one tile: int32 for int8 operands, fp32 otherwise."""
    offs_k = tl.arange(0, BLOCK_K).to(tl.int64)
    a_ptrs = a_base + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_base + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    if INTEGER:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - kk * BLOCK_K
        a_mask = (offs_m[:, None] < M) & (offs_k[None, :] < k_left)
        b_mask = (offs_k[:, None] < k_left) & (offs_n[None, :] < N)
        if INTEGER:
            a = tl.load(a_ptrs, mask=a_mask, other=0)
            b = tl.load(b_ptrs, mask=b_mask, other=0)
        else:
            a = tl.load(a_ptrs, mask=a_mask, other=0.0)
            b = tl.load(b_ptrs, mask=b_mask, other=0.0)
        if INTEGER:
            acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        elif FP8:
            # Hopper's fp8 tensor-core accumulation is less precise than fp32, and by default
            # Triton lets it span the whole K loop on sm_90 (max_num_imprecise_acc 2**30);
            # 0 adds every instruction's partial sum into the fp32 accumulator (cuBLASLt
            # without fast accumulation also promotes periodically).
            acc += tl.dot(a, b, max_num_imprecise_acc=0)
        else:
            if UPCAST:
                # On the CPU, exact fp32 products: a bare Triton interpreter (without the
                # CPU backend's bf16 shim) computes bf16 dots on bit patterns.
                a = a.to(tl.float32)
                b = b.to(tl.float32)
            # "ieee": fp32 operands get exact fp32 products (no TF32), as cuBLAS's compute
            # type CUBLAS_COMPUTE_32F promises; fp16/bf16 operands use tensor cores anyway.
            acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return acc


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, d_ptr, bias_ptr, aux_ptr, a_scale_ptr, b_scale_ptr,
                   M, N, K, stride_am, stride_ak, stride_bk, stride_bn, ldc, ldd, ldaux,
                   alpha, beta,
                   BETA_ZERO: tl.constexpr, HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr,
                   HAS_AUX: tl.constexpr, HAS_SCALES: tl.constexpr, INTEGER: tl.constexpr,
                   FP8: tl.constexpr, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    # 64-bit offsets: a 14336 x 14336 output already has 2^27.6 elements, and ld * n grows.
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    acc = _product(a_ptr, b_ptr, offs_m, offs_n, M, N, K, stride_am, stride_ak, stride_bk,
                   stride_bn, INTEGER, FP8, UPCAST, BLOCK_M, BLOCK_N, BLOCK_K)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if HAS_SCALES:
        # cuBLASLt's A and B scale pointers: D = alpha * scaleA * scaleB * op(A) @ op(B).
        alpha = alpha * tl.load(a_scale_ptr) * tl.load(b_scale_ptr)
    out = alpha * acc
    if not BETA_ZERO:
        # beta == 0: C is not read (cuBLAS: it need not be set), so NaN in it cannot reach D.
        c = tl.load(c_ptr + offs_m[:, None] + offs_n[None, :] * ldc, mask=mask, other=0)
        out += beta * c.to(out.dtype)
    if HAS_BIAS:
        # CUBLASLT_EPILOGUE_BIAS: one value per row of D, broadcast over its columns.
        bias = tl.load(bias_ptr + offs_m, mask=offs_m < M, other=0.0).to(tl.float32)
        out += bias[:, None]
    if HAS_AUX:
        # *_AUX epilogues: the pre-activation (after the bias) goes to the aux buffer.
        aux_ptrs = aux_ptr + offs_m[:, None] + offs_n[None, :] * ldaux
        tl.store(aux_ptrs, out.to(aux_ptr.dtype.element_ty), mask=mask)
    if ACTIVATION == 1:
        out = tl.maximum(out, 0.0)
    elif ACTIVATION == 2:
        out = _gelu_tanh(out)
    d_ptrs = d_ptr + offs_m[:, None] + offs_n[None, :] * ldd
    tl.store(d_ptrs, out.to(d_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _grouped_kernel(a_ptr, b_ptr, c_ptr, a_array, b_array, c_array, shapes, alphas, betas,
                    problems, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # One launch for every problem of every group: shapes[p] = (m, n, k, stride_am, stride_ak,
    # stride_bk, stride_bn, ldc, first tile, group), problem p's tiles are first tile ..
    # next problem's first tile - 1. A program finds its problem by a scan (few problems).
    pid = tl.program_id(0)
    problem = pid * 0  # an int32 tensor, so that the loop carries one type
    for p in range(1, problems):
        problem = tl.where(tl.load(shapes + p * 10 + 8) <= pid, p, problem)
    row = shapes + problem * 10
    M = tl.load(row + 0)
    N = tl.load(row + 1)
    K = tl.load(row + 2)
    group = tl.load(row + 9)
    alpha = tl.load(alphas + group)
    beta = tl.load(betas + group)
    pid_m, pid_n = _tile_of(pid - tl.load(row + 8), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    # Aarray[p] etc.: cuBLAS's device arrays of pointers, one matrix per problem.
    a_base = tl.load(a_array + problem).to(a_ptr.dtype)
    b_base = tl.load(b_array + problem).to(b_ptr.dtype)
    c_base = tl.load(c_array + problem).to(c_ptr.dtype)
    acc = _product(a_base, b_base, offs_m, offs_n, M, N, K, tl.load(row + 3), tl.load(row + 4),
                   tl.load(row + 5), tl.load(row + 6), False, False, UPCAST, BLOCK_M, BLOCK_N,
                   BLOCK_K)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    c_ptrs = c_base + offs_m[:, None] + offs_n[None, :] * tl.load(row + 7)
    out = alpha * acc
    if beta != 0:  # a runtime branch: a group with beta == 0 never reads its C
        out += beta * tl.load(c_ptrs, mask=mask, other=0.0).to(tl.float32)
    tl.store(c_ptrs, out.to(c_ptr.dtype.element_ty), mask=mask)


# -- host side -------------------------------------------------------------------------------
_TYPE_NAMES = {torch.float16: "CUDA_R_16F", torch.bfloat16: "CUDA_R_16BF",
               torch.float32: "CUDA_R_32F", torch.int8: "CUDA_R_8I", torch.int32: "CUDA_R_32I"}


def _check_types(*pairs) -> None:
    # The type arguments name the buffers' dtypes; the tensors carry them already, so they
    # only have to agree.
    for buf, name in pairs:
        if _TYPE_NAMES.get(buf.dtype) != name:
            raise ValueError(f"a {buf.dtype} buffer passed as {name}")


def _strides(trans: str, ld: int) -> tuple[int, int]:
    """(stride along op(X)'s rows, stride along its columns): a stored-transposed matrix
    (trans "T", or "C", which is "T" for real types) swaps them."""
    if trans not in ("N", "T", "C"):
        raise ValueError(f"trans must be N, T or C, not {trans!r}")
    return (1, ld) if trans == "N" else (ld, 1)


def _tiles(m: int, n: int, dtype: torch.dtype, device_type: str) -> tuple[int, int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_warps). tl.dot needs every dim >= 16 (and K >= 32 for
    fp8 on Hopper); a skinny output (decode: few columns or few rows) gets a narrow tile in
    that direction and more programs in the other."""
    if device_type == "cpu":  # the interpreter: small tiles, each program is numpy work
        return (16 if m <= 16 else 32), (16 if n <= 16 else 32), 32, 4
    narrow_k = 64 if dtype == torch.float32 else 128
    if n <= 16:
        return 64, 16, narrow_k, 4
    if m <= 16:
        return 16, 64, narrow_k, 4
    if dtype == torch.float32:
        return 128, 128, 32, 8
    if dtype in (torch.int8, torch.float8_e4m3fn):
        return 128, 128, 128, 8
    return 128, 128, 64, 8


def _launch(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, d, ldd, *,
            bias=None, aux=None, ldaux=0, activation=NONE, scales=None):
    if m <= 0 or n <= 0:
        return
    stride_am, stride_ak = _strides(transa, lda)
    stride_bk, stride_bn = _strides(transb, ldb)
    integer = a.dtype == torch.int8
    fp8 = a.dtype == torch.float8_e4m3fn
    block_m, block_n, block_k, warps = _tiles(m, n, a.dtype, d.device.type)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    a_scale, b_scale = scales if scales is not None else (d, d)
    _matmul_kernel[grid](
        a, b, c if c is not None else d, d, bias if bias is not None else d,
        aux if aux is not None else d, a_scale, b_scale,
        m, n, k, stride_am, stride_ak, stride_bk, stride_bn, ldc, ldd, ldaux,
        int(alpha) if integer else float(alpha), int(beta) if integer else float(beta),
        BETA_ZERO=beta == 0, HAS_BIAS=bias is not None, ACTIVATION=activation,
        HAS_AUX=aux is not None, HAS_SCALES=scales is not None, INTEGER=integer, FP8=fp8,
        UPCAST=a.dtype == torch.bfloat16 and d.device.type == "cpu",
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8, num_warps=warps)


def gemm_ex(transa: str, transb: str, m: int, n: int, k: int, alpha, A: torch.Tensor,
            Atype: str, lda: int, B: torch.Tensor, Btype: str, ldb: int, beta,
            C: torch.Tensor, Ctype: str, ldc: int, computeType: str, algo: str) -> None:
    _check_types((A, Atype), (B, Btype), (C, Ctype))
    expected = "CUBLAS_COMPUTE_32I" if A.dtype == torch.int8 else "CUBLAS_COMPUTE_32F"
    if computeType != expected:
        raise ValueError(f"computeType {computeType} for {Atype} inputs")
    _launch(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, C, ldc)


def _lt(activation: int, with_bias: bool):
    def lt_matmul(transa: str, transb: str, m: int, n: int, k: int, alpha: float,
                  A: torch.Tensor, lda: int, B: torch.Tensor, ldb: int, *rest) -> None:
        bias, (D, ldd) = (rest[0], rest[1:]) if with_bias else (None, rest)
        _launch(transa, transb, m, n, k, alpha, A, lda, B, ldb, 0.0, None, 0, D, ldd,
                bias=bias, activation=activation)

    return lt_matmul


lt_bias = _lt(NONE, True)
lt_relu = _lt(RELU, False)
lt_gelu = _lt(GELU, False)
lt_bias_relu = _lt(RELU, True)
lt_bias_gelu = _lt(GELU, True)


def lt_bias_gelu_aux(transa: str, transb: str, m: int, n: int, k: int, alpha: float,
                     A: torch.Tensor, lda: int, B: torch.Tensor, ldb: int, bias: torch.Tensor,
                     D: torch.Tensor, ldd: int, aux: torch.Tensor, ldaux: int) -> None:
    _launch(transa, transb, m, n, k, alpha, A, lda, B, ldb, 0.0, None, 0, D, ldd, bias=bias,
            aux=aux, ldaux=ldaux, activation=GELU)


def lt_fp8(transa: str, transb: str, m: int, n: int, k: int, alpha: float, A: torch.Tensor,
           lda: int, a_scale: torch.Tensor, B: torch.Tensor, ldb: int, b_scale: torch.Tensor,
           D: torch.Tensor, ldd: int) -> None:
    _launch(transa, transb, m, n, k, alpha, A, lda, B, ldb, 0.0, None, 0, D, ldd,
            scales=(a_scale, b_scale))


def grouped(transa_array: list, transb_array: list, m_array: list, n_array: list,
            k_array: list, alpha_array: list, Aarray: list, Atype: str, lda_array: list,
            Barray: list, Btype: str, ldb_array: list, beta_array: list, Carray: list,
            Ctype: str, ldc_array: list, group_count: int, group_size: list,
            computeType: str) -> None:
    if computeType != "CUBLAS_COMPUTE_32F":
        raise ValueError(f"computeType {computeType}: this kernel computes in fp32")
    device = Carray[0].device
    dtype = Aarray[0].dtype
    rows, problem = [], 0
    block_m, block_n, block_k, warps = _tiles(max(m_array), max(n_array), dtype, device.type)
    tiles = 0
    for group in range(group_count):
        m, n, k = m_array[group], n_array[group], k_array[group]
        stride_am, stride_ak = _strides(transa_array[group], lda_array[group])
        stride_bk, stride_bn = _strides(transb_array[group], ldb_array[group])
        for _ in range(group_size[group]):
            _check_types((Aarray[problem], Atype), (Barray[problem], Btype),
                         (Carray[problem], Ctype))
            if m > 0 and n > 0:
                rows.append((problem, [m, n, k, stride_am, stride_ak, stride_bk, stride_bn,
                                       ldc_array[group], tiles, group]))
                tiles += triton.cdiv(m, block_m) * triton.cdiv(n, block_n)
            problem += 1
    if not tiles:
        return
    # Device arrays as cuBLAS takes them: pointers per problem, sizes and scalars per group.
    shapes = torch.tensor([row for _, row in rows], dtype=torch.int64, device=device)

    def pointers(buffers):
        return torch.tensor([buffers[p].data_ptr() for p, _ in rows], dtype=torch.int64,
                            device=device)

    alphas = torch.tensor([float(x) for x in alpha_array], dtype=torch.float32, device=device)
    betas = torch.tensor([float(x) for x in beta_array], dtype=torch.float32, device=device)
    _grouped_kernel[(tiles,)](
        Aarray[0], Barray[0], Carray[0], pointers(Aarray), pointers(Barray), pointers(Carray),
        shapes, alphas, betas, len(rows),
        UPCAST=dtype == torch.bfloat16 and device.type == "cpu",
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8, num_warps=warps)


kernel = __ENTRY__
