# cuBLAS trsm, in place on B: solves op(A) @ X = alpha * B (side "L", A m x m) or
# X @ op(A) = alpha * B (side "R", A n x n) for a triangular A of which only the uplo triangle
# is read, and X overwrites B (m x n). op(A) is A, A^T or (complex) A^H; diag "U": A's
# diagonal is taken as ones and never read (it may hold NaN). Buffers are column-major 1-D
# tensors, element (i, j) at buf[i + j * ld]; complex buffers interleave real and imaginary
# parts. The batched entry takes lists of buffers (cuBLAS's arrays of device pointers).
#
# Side "R" is side "L" transposed: X op(A) = alpha B  <=>  op(A)^T X^T = alpha B^T. So the
# kernels solve one form, T @ X' = alpha * B', with T a K x K triangular matrix given by its
# element strides (T = op(A) for side "L", op(A)^T for side "R": swapped strides, the other
# triangle, and for A^H a conjugate without transpose) and B' a view of B given by its row
# and column strides.
#
# Two launches. The first inverts T's BLOCK x BLOCK diagonal blocks, one program each, by
# substitution on the identity. The second gives each program BLOCK_N columns of X' (they
# are independent) and walks T's block rows in solve order (forward for a lower T, backward
# for an upper one): rhs = alpha * B'_b - sum over solved blocks c of T_bc @ X'_c, then
# X'_b = inv(T_bb) @ rhs, stored over B'_b, where the next block rows read it back.
# fp32 products use tl.dot; fp64 ones (D, Z) are broadcast multiplies and sums (FMAs), since
# tl.dot has no fp64 path on NVIDIA GPUs.
import torch
import triton
import triton.language as tl

IS_COMPLEX = __COMPLEX__


@triton.jit
def _mac(acc, a, b, FP64: tl.constexpr):
    """acc + a @ b."""
    # if/else, not an early return: the compiler also compiles what follows a returning
    # constexpr branch, and tl.dot on fp64 does not compile.
    if FP64:
        acc = acc + tl.sum(a[:, :, None] * b[None, :, :], axis=1)
    else:
        acc = tl.dot(a, b, acc, input_precision="ieee")
    return acc


@triton.jit
def _invert_diagonal_blocks(a_ptr, a_array, inv_ptr, K, stride_tm, stride_tk, lda,
                            FORWARD: tl.constexpr, UNIT: tl.constexpr, CONJ: tl.constexpr,
                            COMPLEX: tl.constexpr, POINTER_ARRAYS: tl.constexpr,
                            BLOCK: tl.constexpr):
    b = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    nb = tl.cdiv(K, BLOCK)
    if POINTER_ARRAYS:
        a_base = tl.load(a_array + batch).to(a_ptr.dtype)
    else:
        a_base = a_ptr
    offs = tl.arange(0, BLOCK)
    rows = (b * BLOCK + offs).to(tl.int64)
    row_ok = rows < K
    # r starts as the identity; step t finishes row tt of X = inv(D) (D the diagonal block):
    # row tt of r is then e_tt - sum over finished s of D[tt, s] X[s, :], so X[tt, :] is it
    # divided by D[tt, tt]; later rows subtract D[:, tt] X[tt, :]. Rows past K keep the
    # identity (diagonal read as 1, columns as 0) and stay decoupled from the valid rows.
    r_re = tl.where(offs[:, None] == offs[None, :], 1.0, 0.0).to(a_ptr.dtype.element_ty)
    r_im = tl.zeros((BLOCK, BLOCK), dtype=a_ptr.dtype.element_ty)
    if COMPLEX:
        d_idx = 2 * rows * (lda + 1)
    else:
        d_idx = rows * (lda + 1)
    if not UNIT:
        d_re = tl.load(a_base + d_idx, mask=row_ok, other=1.0)
        if COMPLEX:
            d_im = tl.load(a_base + d_idx + 1, mask=row_ok, other=0.0)
            if CONJ:
                d_im = -d_im
    for t in range(0, BLOCK):
        if FORWARD:
            tt = t
        else:
            tt = BLOCK - 1 - t
        sel = offs == tt
        x_re = tl.sum(tl.where(sel[:, None], r_re, 0.0), axis=0)
        if COMPLEX:
            x_im = tl.sum(tl.where(sel[:, None], r_im, 0.0), axis=0)
            if not UNIT:
                dr = tl.sum(tl.where(sel, d_re, 0.0))
                di = tl.sum(tl.where(sel, d_im, 0.0))
                den = dr * dr + di * di
                x_re, x_im = (x_re * dr + x_im * di) / den, (x_im * dr - x_re * di) / den
        elif not UNIT:
            x_re = x_re / tl.sum(tl.where(sel, d_re, 0.0))
        col = b * BLOCK + tt
        if FORWARD:
            later = offs > tt
        else:
            later = offs < tt
        ok = row_ok & later & ((offs * 0 + col) < K)
        # Column tt of D below (forward) or above (backward) the diagonal: T(rows, col).
        idx = rows * stride_tm + col.to(tl.int64) * stride_tk
        if COMPLEX:
            t_re = tl.load(a_base + 2 * idx, mask=ok, other=0.0)
            t_im = tl.load(a_base + 2 * idx + 1, mask=ok, other=0.0)
            if CONJ:
                t_im = -t_im
            r_re = r_re - (t_re[:, None] * x_re[None, :] - t_im[:, None] * x_im[None, :])
            r_im = r_im - (t_re[:, None] * x_im[None, :] + t_im[:, None] * x_re[None, :])
            r_im = tl.where(sel[:, None], x_im[None, :], r_im)
        else:
            t_re = tl.load(a_base + idx, mask=ok, other=0.0)
            r_re = r_re - t_re[:, None] * x_re[None, :]
        r_re = tl.where(sel[:, None], x_re[None, :], r_re)
    # inv is (batch, nb, BLOCK, BLOCK), row-major within a block; complex: separate planes.
    out = inv_ptr + ((batch * nb + b) * BLOCK * BLOCK
                     + offs[:, None] * BLOCK + offs[None, :]) * (2 if COMPLEX else 1)
    tl.store(out, r_re)
    if COMPLEX:
        tl.store(out + 1, r_im)


@triton.jit
def _trsm_kernel(a_ptr, b_ptr, inv_ptr, a_array, b_array, K, NR, stride_tm, stride_tk,
                 stride_bm, stride_bn, alpha_ptr,
                 FORWARD: tl.constexpr, CONJ: tl.constexpr, COMPLEX: tl.constexpr,
                 POINTER_ARRAYS: tl.constexpr, FP64: tl.constexpr, BLOCK: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    if POINTER_ARRAYS:
        a_base = tl.load(a_array + batch).to(a_ptr.dtype)
        b_base = tl.load(b_array + batch).to(b_ptr.dtype)
    else:
        a_base = a_ptr
        b_base = b_ptr
    nb = tl.cdiv(K, BLOCK)
    offs = tl.arange(0, BLOCK)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    n_ok = offs_n < NR
    if FP64:
        zero = tl.zeros((BLOCK, BLOCK_N), dtype=tl.float64)
    else:
        zero = tl.zeros((BLOCK, BLOCK_N), dtype=tl.float32)
    width = 2 if COMPLEX else 1  # reals per element
    # alpha in the buffers' precision (a float argument would arrive as fp32).
    alpha_r = tl.load(alpha_ptr)
    alpha_i = tl.load(alpha_ptr + 1)
    for s in range(0, nb):
        if FORWARD:
            b = s
        else:
            b = nb - 1 - s
        rows = (b * BLOCK + offs).to(tl.int64)
        row_ok = rows < K
        x_mask = row_ok[:, None] & n_ok[None, :]
        x_ptrs = b_base + (rows[:, None] * stride_bm + offs_n[None, :] * stride_bn) * width
        br = tl.load(x_ptrs, mask=x_mask, other=0.0)
        if COMPLEX:
            bi = tl.load(x_ptrs + 1, mask=x_mask, other=0.0)
            acc_r = alpha_r * br - alpha_i * bi
            acc_i = alpha_r * bi + alpha_i * br
        else:
            acc_r = alpha_r * br
            acc_i = zero
        for s2 in range(0, s):
            if FORWARD:
                c = s2
            else:
                c = nb - 1 - s2
            cols = (c * BLOCK + offs).to(tl.int64)
            col_ok = cols < K
            # An off-diagonal block of the triangle: every element is stored and read.
            t_idx = (rows[:, None] * stride_tm + cols[None, :] * stride_tk) * width
            t_mask = row_ok[:, None] & col_ok[None, :]
            s_ptrs = b_base + (cols[:, None] * stride_bm + offs_n[None, :] * stride_bn) * width
            s_mask = col_ok[:, None] & n_ok[None, :]
            tr = tl.load(a_base + t_idx, mask=t_mask, other=0.0)
            xr = tl.load(s_ptrs, mask=s_mask, other=0.0)
            acc_r = _mac(acc_r, -tr, xr, FP64)
            if COMPLEX:
                ti = tl.load(a_base + t_idx + 1, mask=t_mask, other=0.0)
                if CONJ:
                    ti = -ti
                xi = tl.load(s_ptrs + 1, mask=s_mask, other=0.0)
                acc_r = _mac(acc_r, ti, xi, FP64)
                acc_i = _mac(acc_i, -tr, xi, FP64)
                acc_i = _mac(acc_i, -ti, xr, FP64)
        inv = inv_ptr + ((batch * nb + b) * BLOCK * BLOCK
                         + offs[:, None] * BLOCK + offs[None, :]) * width
        vr = tl.load(inv)
        xr = _mac(zero, vr, acc_r, FP64)
        if COMPLEX:
            vi = tl.load(inv + 1)
            xr = _mac(xr, -vi, acc_i, FP64)
            xi = _mac(_mac(zero, vr, acc_i, FP64), vi, acc_r, FP64)
            tl.store(x_ptrs + 1, xi, mask=x_mask)
        tl.store(x_ptrs, xr, mask=x_mask)
        # This block row's X is read back by the next ones: every thread's stores first.
        tl.debug_barrier()


def _plan(side, uplo, trans, diag, m, n, lda, ldb):
    """(K, NR, strides of T, strides of B', forward, conj) for T @ X' = alpha * B'."""
    if uplo not in ("U", "L") or diag not in ("N", "U"):
        raise ValueError(f"bad flags uplo={uplo!r} diag={diag!r}")
    if trans not in ("N", "T", "C"):
        raise ValueError(f"trans must be N, T or C, not {trans!r}")
    # op(A)(i, l) = A[i * stride_r + l * stride_c] (conjugated for "C"); op(A) is upper for
    # (U, N) and (L, T or C).
    stride_r, stride_c = (1, lda) if trans == "N" else (lda, 1)
    op_upper = (uplo == "U") == (trans == "N")
    conj = IS_COMPLEX and trans == "C"
    if side == "L":  # op(A) X = alpha B
        return m, n, (stride_r, stride_c), (1, ldb), not op_upper, conj
    if side == "R":  # op(A)^T X^T = alpha B^T: T transposed (not conjugated), B^T's strides
        return n, m, (stride_c, stride_r), (ldb, 1), op_upper, conj
    raise ValueError(f"side must be L or R, not {side!r}")


def _launch(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batch=1, arrays=None):
    k, nr, (stride_tm, stride_tk), (stride_bm, stride_bn), forward, conj = _plan(
        side, uplo, trans, diag, m, n, lda, ldb)
    if m <= 0 or n <= 0 or batch <= 0:
        return None
    fp64 = B.dtype == torch.float64
    cuda = B.device.type == "cuda"
    # fp64 products are BLOCK x BLOCK x BLOCK_N broadcasts: keep them register-sized.
    block = 16 if (fp64 or not cuda) else 64
    block_n = 32 if (fp64 or not cuda or IS_COMPLEX) else 64
    nb = triton.cdiv(k, block)
    inv = torch.empty(batch * nb * block * block * (2 if IS_COMPLEX else 1), dtype=B.dtype,
                      device=B.device)
    a_array, b_array = arrays if arrays is not None else (inv, inv)
    alpha = complex(alpha)
    alpha_buf = torch.tensor([alpha.real, alpha.imag], dtype=B.dtype, device=B.device)
    _invert_diagonal_blocks[(nb, batch)](
        A, a_array, inv, k, stride_tm, stride_tk, lda, FORWARD=forward, UNIT=diag == "U",
        CONJ=conj, COMPLEX=IS_COMPLEX, POINTER_ARRAYS=arrays is not None, BLOCK=block,
        num_warps=4)
    _trsm_kernel[(triton.cdiv(nr, block_n), batch)](
        A, B, inv, a_array, b_array, k, nr, stride_tm, stride_tk, stride_bm, stride_bn,
        alpha_buf, FORWARD=forward, CONJ=conj, COMPLEX=IS_COMPLEX,
        POINTER_ARRAYS=arrays is not None, FP64=fp64, BLOCK=block, BLOCK_N=block_n,
        num_warps=4)
    return None


def trsm(side: str, uplo: str, trans: str, diag: str, m: int, n: int, alpha,
         A: torch.Tensor, lda: int, B: torch.Tensor, ldb: int) -> None:
    return _launch(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb)


def trsm_batched(side: str, uplo: str, trans: str, diag: str, m: int, n: int, alpha,
                 Aarray: list, lda: int, Barray: list, ldb: int, batchCount: int) -> None:
    if batchCount <= 0:
        return None
    device = Barray[0].device
    # cuBLAS's device arrays of pointers (Aarray[i] is batch i's matrix), as int64 addresses.
    arrays = tuple(torch.tensor([t.data_ptr() for t in x[:batchCount]], dtype=torch.int64,
                                device=device) for x in (Aarray, Barray))
    return _launch(side, uplo, trans, diag, m, n, alpha, Aarray[0], lda, Barray[0], ldb,
                   batch=batchCount, arrays=arrays)


kernel = __ENTRY__
