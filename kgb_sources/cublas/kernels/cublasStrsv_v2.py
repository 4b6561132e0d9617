# cublasStrsv_v2: solves op(A) * x = b for a triangular n x n A of which only the uplo triangle is
# read (column-major, A(i, j) = A[i + j * lda]); b comes in x and the solution overwrites it.
# diag U: the diagonal is taken as ones and never read. The solve is sequential by nature, so
# one program runs it block by block in solve order (forward when op(A) is lower triangular,
# backward when upper): it subtracts the already-solved blocks from the block's right-hand side
# with tile products, then substitutes through the diagonal block one row at a time, reading
# that block's columns from memory. A barrier after each block's store makes the new x values
# visible to every thread of the program before the next block reads them.
import torch
import triton
import triton.language as tl


@triton.jit
def _trsv_kernel(a_ptr, x_ptr, n, lda, incx,
                 FORWARD: tl.constexpr, TRANS: tl.constexpr, UNIT: tl.constexpr,
                 BLOCK: tl.constexpr):
    nb = tl.cdiv(n, BLOCK)
    offs = tl.arange(0, BLOCK)
    for step in range(0, nb):
        if FORWARD:
            b = step
        else:
            b = nb - 1 - step
        rows = b * BLOCK + offs
        row_ok = rows < n
        rows64 = rows.to(tl.int64)
        acc = tl.load(x_ptr + rows * incx, mask=row_ok, other=0.0).to(tl.float32)
        for s in range(0, step):
            if FORWARD:
                cb = s
            else:
                cb = nb - 1 - s
            cols = cb * BLOCK + offs
            col_ok = cols < n
            cols64 = cols.to(tl.int64)
            mask = row_ok[:, None] & col_ok[None, :]
            # op(A)(r, c): A(r, c) for trans N, A(c, r) for trans T.
            if TRANS:
                idx = cols64[None, :] + rows64[:, None] * lda
            else:
                idx = rows64[:, None] + cols64[None, :] * lda
            a = tl.load(a_ptr + idx, mask=mask, other=0.0)
            xs = tl.load(x_ptr + cols * incx, mask=col_ok, other=0.0)
            acc -= tl.sum(a * xs[None, :], axis=1)
        if not UNIT:
            # Rows past n divide by 1, so no NaN reaches the valid rows through them.
            d = tl.load(a_ptr + rows64 * (lda + 1), mask=row_ok, other=1.0)
        xblk = tl.zeros((BLOCK,), dtype=tl.float32)
        for t in range(0, BLOCK):
            if FORWARD:
                tt = t
            else:
                tt = BLOCK - 1 - t
            sel = offs == tt
            xt = tl.sum(tl.where(sel, acc, 0.0))
            if not UNIT:
                xt = xt / tl.sum(tl.where(sel, d, 0.0))
            xblk = tl.where(sel, xt, xblk)
            # Column tt of the diagonal block, for the rows solved after it.
            col = b * BLOCK + tt
            if FORWARD:
                later = offs > tt
            else:
                later = offs < tt
            ok = row_ok & later & ((offs * 0 + col) < n)
            if TRANS:
                idx = col + rows64 * lda
            else:
                idx = rows64 + col.to(tl.int64) * lda
            a = tl.load(a_ptr + idx, mask=ok, other=0.0)
            acc -= a * xt
        tl.store(x_ptr + rows * incx, xblk, mask=row_ok)
        tl.debug_barrier()


def kernel(uplo: str, trans: str, diag: str, n: int, A: torch.Tensor, lda: int,
           x: torch.Tensor, incx: int) -> None:
    if n <= 0:
        return None
    transposed = trans != "N"
    # op(A) is lower triangular for (L, N) and (U, T): solve forward.
    forward = (uplo == "L") != transposed
    block = 64 if A.device.type == "cuda" else 16
    _trsv_kernel[(1,)](A, x, n, lda, incx, FORWARD=forward, TRANS=transposed,
                       UNIT=diag == "U", BLOCK=block, num_warps=4)
    return None
