# cublasStrsv_v2: solves op(A) * x = b for a triangular n x n A of which only the uplo triangle is
# read (column-major, A(i, j) = A[i + j * lda]); b comes in x and the solution overwrites it.
# diag U: the diagonal is taken as ones and never read.
#
# The solve is sequential by nature; this one runs it as a wavefront in one launch. The blocks of
# BLOCK rows are taken in solve order (forward when op(A) is lower triangular, backward when
# upper), one program per block. A program first inverts its own diagonal block (all programs
# at once, off the critical path), then, for each earlier block in solve order, waits for that
# block's flag, subtracts its tile product from the right-hand side, and finally multiplies by
# the inverse, stores its x and raises its own flag. Blocks are handed out through an atomic
# ticket, so a program only ever waits for programs that started before it: no deadlock however
# many programs the GPU holds at once (and Triton's interpreter, which runs programs one after
# another in ticket order, never waits at all).
import torch
import triton
import triton.language as tl


@triton.jit
def _trsv_kernel(a_ptr, x_ptr, flags_ptr, ticket_ptr, n, lda, incx,
                 FORWARD: tl.constexpr, TRANS: tl.constexpr, UNIT: tl.constexpr,
                 BLOCK: tl.constexpr):
    nb = tl.cdiv(n, BLOCK)
    step = tl.atomic_add(ticket_ptr, 1)
    if FORWARD:
        b = step
    else:
        b = nb - 1 - step
    offs = tl.arange(0, BLOCK)
    rows = b * BLOCK + offs
    row_ok = rows < n
    rows64 = rows.to(tl.int64)

    # Inverse X of the diagonal block D of op(A), by substitution on the identity: row tt of X
    # is finished at step tt, and r holds I - (D's finished columns) x (X's finished rows).
    # Rows past n keep the identity (their diagonal reads as 1, their columns as 0), so they
    # stay decoupled from the valid rows.
    r = tl.where(offs[:, None] == offs[None, :], 1.0, 0.0)
    if not UNIT:
        d = tl.load(a_ptr + rows64 * (lda + 1), mask=row_ok, other=1.0)
    for t in range(0, BLOCK):
        if FORWARD:
            tt = t
        else:
            tt = BLOCK - 1 - t
        sel = offs == tt
        x_row = tl.sum(tl.where(sel[:, None], r, 0.0), axis=0)
        if not UNIT:
            x_row = x_row / tl.sum(tl.where(sel, d, 0.0))
        col = b * BLOCK + tt
        if FORWARD:
            later = offs > tt
        else:
            later = offs < tt
        ok = row_ok & later & ((offs * 0 + col) < n)
        # Column tt of D, op(A)(rows, col): A(rows, col) for trans N, A(col, rows) for T.
        if TRANS:
            idx = col + rows64 * lda
        else:
            idx = rows64 + col.to(tl.int64) * lda
        a = tl.load(a_ptr + idx, mask=ok, other=0.0)
        r = r - a[:, None] * x_row[None, :]
        r = tl.where(sel[:, None], x_row[None, :], r)

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
        if TRANS:
            idx = cols64[None, :] + rows64[:, None] * lda
        else:
            idx = rows64[:, None] + cols64[None, :] * lda
        a = tl.load(a_ptr + idx, mask=mask, other=0.0)
        # Wait until block cb is solved; the acquire orders the x loads after it, and .cg reads
        # them from L2, where the other program's stores landed.
        ready = tl.atomic_add(flags_ptr + cb, 0, sem="acquire")
        while ready == 0:
            ready = tl.atomic_add(flags_ptr + cb, 0, sem="acquire")
        xs = tl.load(x_ptr + cols * incx, mask=col_ok, other=0.0, cache_modifier=".cg")
        acc -= tl.sum(a * xs[None, :], axis=1)
    x_block = tl.sum(r * acc[None, :], axis=1)
    tl.store(x_ptr + rows * incx, x_block, mask=row_ok)
    # Every thread's store is done before the flag is raised (release: visible GPU-wide first).
    tl.debug_barrier()
    tl.atomic_xchg(flags_ptr + b, 1, sem="release")


def kernel(uplo: str, trans: str, diag: str, n: int, A: torch.Tensor, lda: int,
           x: torch.Tensor, incx: int) -> None:
    if n <= 0:
        return None
    transposed = trans != "N"
    # op(A) is lower triangular for (L, N) and (U, T): solve forward.
    forward = (uplo == "L") != transposed
    block = 64 if A.device.type == "cuda" else 16
    blocks = triton.cdiv(n, block)
    flags = torch.zeros(blocks + 1, dtype=torch.int32, device=A.device)
    _trsv_kernel[(blocks,)](A, x, flags, flags[blocks:], n, lda, incx, FORWARD=forward,
                            TRANS=transposed, UNIT=diag == "U", BLOCK=block, num_warps=4)
    return None
