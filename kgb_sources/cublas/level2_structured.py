"""cuBLAS Level 2 routines on structured matrices: symmetric (symv, syr, syr2), symmetric and
general band (sbmv, gbmv) and triangular (trmv, trsv, tbmv).

Every routine follows cuBLAS's semantics exactly. symv, syr and syr2 read (and syr/syr2 write)
only the ``uplo`` triangle of A: the other triangle holds random values, which must not reach y
and must stay untouched in a written A. Band matrices use the LAPACK/cuBLAS band storage: column
j of the band (a ``lda x n`` column-major buffer, ``lda >= kl + ku + 1``) holds A's column j,
with A(i, j) at band row ``ku + i - j``; the band's unused corners hold random values that must
not be read. Triangular routines take ``uplo``, ``trans`` and ``diag``; with ``diag = "U"`` the
diagonal of A holds NaN, since cuBLAS takes it as ones and never reads it. The triangular
solves' matrices are strictly diagonally dominant by rows and by columns, so both op(A) = A and
A^T are well conditioned. Vectors are strided (``inc > 1`` in most cases) and the elements
between the strided ones stay as they were.

None of these routines has a direct PyTorch call, so each reference is composed from ones that
do (mv, triu/tril, solve_triangular, gathers of the band) and says so; on NVIDIA those run on
cuBLAS, so the timed baseline is a composed cuBLAS pipeline, not the cuBLAS routine itself.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.cublas._build import (
    COLUMN_MAJOR_NOTE, VECTOR_NOTE, Y_BETA_NOTE, column_major_length, condition_triangle,
    cublas_op, draw_buffer, from_template, matrix, op, precision_of, real_params, scalar,
    symmetric_matrix, triangle_elements, triangular_matrix, vector, vector_buffer,
)

FAMILY = "level2"

_UPLO_NOTE = (" Only the uplo triangle of A (uplo 'U': i <= j, 'L': i >= j) is read; the "
              "other triangle holds unrelated values.")
_BAND_NOTE = (" Band storage as cuBLAS/LAPACK define it: the band is an lda x n column-major "
              "buffer whose column j holds A's column j, A(i, j) at band row ku + i - j "
              "(element (r, j) is A[r + j * lda]); band entries outside the matrix (the unused "
              "corners) and rows past kl + ku are never read.")
_TRIANGULAR_NOTE = (" uplo 'U': A is upper triangular (only i <= j is read), 'L': lower (only "
                    "i >= j); trans 'N': op(A) = A, 'T' or 'C': op(A) = A^T; diag 'N': A's "
                    "diagonal is used, 'U': A is unit triangular, its diagonal is taken as ones "
                    "and never read (it may hold NaN).")


def _is_complex(name: str) -> bool:
    return precision_of(name)[1]


# -- inputs ---------------------------------------------------------------------------------
def _symv_inputs(name: str) -> Callable[[InputContext], list[Any]]:
    is_complex = _is_complex(name)

    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        n, lda = p["n"], p["lda"]
        a = draw_buffer(ctx, column_major_length(n, n, lda), is_complex=is_complex)
        x = vector_buffer(ctx, n, p["incx"], is_complex=is_complex)
        beta = scalar(p["beta"], is_complex)
        y = vector_buffer(ctx, n, p["incy"], is_complex=is_complex, nan=beta == 0)
        return [p["uplo"], n, scalar(p["alpha"], is_complex), a, lda, x, p["incx"], beta, y,
                p["incy"]]

    return make


def _syr_inputs(two_vectors: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        n, lda = p["n"], p["lda"]
        x = vector_buffer(ctx, n, p["incx"])
        vectors = [x, p["incx"]]
        if two_vectors:
            vectors += [vector_buffer(ctx, n, p["incy"]), p["incy"]]
        a = draw_buffer(ctx, column_major_length(n, n, lda))
        return [p["uplo"], n, float(p["alpha"]), *vectors, a, lda]

    return make


def _sbmv_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    n, k, lda = p["n"], p["k"], p["lda"]
    a = draw_buffer(ctx, column_major_length(k + 1, n, lda))
    x = vector_buffer(ctx, n, p["incx"])
    beta = float(p["beta"])
    y = vector_buffer(ctx, n, p["incy"], nan=beta == 0)
    return [p["uplo"], n, k, float(p["alpha"]), a, lda, x, p["incx"], beta, y, p["incy"]]


def _gbmv_lengths(p: Mapping[str, Any]) -> tuple[int, int]:
    """(length of x, length of y): op(A) is m x n for trans N, n x m otherwise."""
    return (p["n"], p["m"]) if p["trans"] == "N" else (p["m"], p["n"])


def _gbmv_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    m, n, kl, ku, lda = p["m"], p["n"], p["kl"], p["ku"], p["lda"]
    x_len, y_len = _gbmv_lengths(p)
    a = draw_buffer(ctx, column_major_length(kl + ku + 1, n, lda))
    x = vector_buffer(ctx, x_len, p["incx"])
    beta = float(p["beta"])
    y = vector_buffer(ctx, y_len, p["incy"], nan=beta == 0)
    return [p["trans"], m, n, kl, ku, float(p["alpha"]), a, lda, x, p["incx"], beta, y,
            p["incy"]]


def _tbmv_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    n, k, lda = p["n"], p["k"], p["lda"]
    a = draw_buffer(ctx, column_major_length(k + 1, n, lda))
    if p["diag"] == "U":
        # The diagonal sits at band row k (uplo U) or 0 (uplo L); cuBLAS never reads it.
        band = matrix(a, k + 1, n, lda)
        band[k if p["uplo"] == "U" else 0].fill_(float("nan"))
    return [p["uplo"], p["trans"], p["diag"], n, k, a, lda,
            vector_buffer(ctx, n, p["incx"]), p["incx"]]


def _triangular_inputs(solve: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        n, lda = p["n"], p["lda"]
        a = draw_buffer(ctx, column_major_length(n, n, lda))
        view = matrix(a, n, n, lda)
        if solve:
            condition_triangle(ctx, view, p["uplo"])
        if p["diag"] == "U":
            view.diagonal().fill_(float("nan"))
        return [p["uplo"], p["trans"], p["diag"], n, a, lda,
                vector_buffer(ctx, n, p["incx"]), p["incx"]]

    return make


# -- references -----------------------------------------------------------------------------
def _symv_reference(name: str) -> Callable[..., None]:
    is_complex = _is_complex(name)

    def reference(uplo, n, alpha, A, lda, x, incx, beta, y, incy):  # noqa: ANN001, N803
        s = symmetric_matrix(matrix(A, n, n, lda, is_complex=is_complex), uplo)
        xv = vector(x, n, incx, is_complex=is_complex)
        yv = vector(y, n, incy, is_complex=is_complex)
        product = alpha * (s @ xv)
        yv.copy_(product if beta == 0 else product + beta * yv)

    return reference


def _syr_reference(uplo, n, alpha, x, incx, A, lda):  # noqa: ANN001, ANN202, N803
    import torch

    a = matrix(A, n, n, lda)
    xv = vector(x, n, incx)
    update = a + alpha * torch.outer(xv, xv)
    a.copy_(torch.triu(update) + torch.tril(a, -1) if uplo == "U"
            else torch.tril(update) + torch.triu(a, 1))


def _syr2_reference(uplo, n, alpha, x, incx, y, incy, A, lda):  # noqa: ANN001, ANN202, N803
    import torch

    a = matrix(A, n, n, lda)
    xv, yv = vector(x, n, incx), vector(y, n, incy)
    update = a + alpha * (torch.outer(xv, yv) + torch.outer(yv, xv))
    a.copy_(torch.triu(update) + torch.tril(a, -1) if uplo == "U"
            else torch.tril(update) + torch.triu(a, 1))


def _band_matvec(band, rows: int, cols: int, kl: int, ku: int, transposed: bool, x,
                 skip_diagonal: bool = False):  # noqa: ANN001, ANN202
    """op(A) @ x for the rows x cols band matrix A (kl sub-, ku super-diagonals) held in
    ``band`` ((kl + ku + 1) x cols, A(i, j) at band[ku + i - j, j]), gathering each output's
    kl + ku + 1 band entries. ``skip_diagonal`` leaves A(i, i) out (a unit diagonal)."""
    import torch

    width = kl + ku + 1
    device = band.device
    offset = torch.arange(width, device=device)[None, :]
    if transposed:
        # Output j sums A(i, j) x_i down band column j: i = j - ku + r, band row r.
        out = torch.arange(cols, device=device)[:, None]
        other = out - ku + offset
        band_row, band_col = offset.expand_as(other), out.expand_as(other)
        valid = (other >= 0) & (other < rows)
    else:
        # Output i sums A(i, j) x_j along a band diagonal: j = i - kl + o, band row kl + ku - o.
        out = torch.arange(rows, device=device)[:, None]
        other = out - kl + offset
        band_row, band_col = (kl + ku - offset).expand_as(other), other
        valid = (other >= 0) & (other < cols)
    if skip_diagonal:
        valid = valid & (other != out)
    safe_col = band_col.clamp(0, cols - 1)
    safe_other = other.clamp(0, (rows if transposed else cols) - 1)
    terms = band[band_row, safe_col] * x[safe_other]
    return torch.where(valid, terms, torch.zeros_like(terms)).sum(dim=1)


def _sbmv_reference(uplo, n, k, alpha, A, lda, x, incx, beta, y, incy):  # noqa: ANN001, ANN202, N803
    band = matrix(A, k + 1, n, lda)
    xv, yv = vector(x, n, incx), vector(y, n, incy)
    kl, ku = (0, k) if uplo == "U" else (k, 0)
    # S = T + T^T - diag(T) for the stored triangle T.
    diagonal = band[k] if uplo == "U" else band[0]
    product = (_band_matvec(band, n, n, kl, ku, False, xv)
               + _band_matvec(band, n, n, kl, ku, True, xv) - diagonal * xv)
    yv.copy_(alpha * product if beta == 0 else alpha * product + beta * yv)


def _gbmv_reference(trans, m, n, kl, ku, alpha, A, lda, x, incx, beta, y, incy):  # noqa: ANN001, ANN202, N803
    x_len, y_len = (n, m) if trans == "N" else (m, n)
    band = matrix(A, kl + ku + 1, n, lda)
    xv, yv = vector(x, x_len, incx), vector(y, y_len, incy)
    product = alpha * _band_matvec(band, m, n, kl, ku, trans != "N", xv)
    yv.copy_(product if beta == 0 else product + beta * yv)


def _tbmv_reference(uplo, trans, diag, n, k, A, lda, x, incx):  # noqa: ANN001, ANN202, N803
    band = matrix(A, k + 1, n, lda)
    xv = vector(x, n, incx)
    kl, ku = (0, k) if uplo == "U" else (k, 0)
    unit = diag == "U"
    product = _band_matvec(band, n, n, kl, ku, trans != "N", xv, skip_diagonal=unit)
    xv.copy_(product + xv if unit else product)


def _trmv_reference(uplo, trans, diag, n, A, lda, x, incx):  # noqa: ANN001, ANN202, N803
    xv = vector(x, n, incx)
    xv.copy_(op(triangular_matrix(A, n, lda, uplo, diag), trans) @ xv)


def _trsv_reference(uplo, trans, diag, n, A, lda, x, incx):  # noqa: ANN001, ANN202, N803
    import torch

    xv = vector(x, n, incx)
    upper = (uplo == "U") == (trans == "N")
    solution = torch.linalg.solve_triangular(
        op(triangular_matrix(A, n, lda, uplo, diag), trans), xv.unsqueeze(1), upper=upper,
        unitriangular=diag == "U")
    xv.copy_(solution.squeeze(1))


# -- cases ----------------------------------------------------------------------------------
SYMV_CASES = (
    ShapeCase("upper_strided", {"uplo": "U", "n": 37, "lda": 41, "incx": 2, "incy": 3,
                                "alpha": (0.7, -0.4), "beta": (-1.3, 0.5)}),
    ShapeCase("lower", {"uplo": "L", "n": 50, "lda": 53, "incx": 1, "incy": 1,
                        "alpha": (-1.1, 0.3), "beta": (0.6, -0.8)}),
    ShapeCase("beta_zero_y_unset", {"uplo": "L", "n": 29, "lda": 32, "incx": 3, "incy": 1,
                                    "alpha": (1.4, 0.9), "beta": (0.0, 0.0)}),
    ShapeCase("heldout_upper", {"uplo": "U", "n": 61, "lda": 64, "incx": 1, "incy": 2,
                                "alpha": (0.9, 0.2), "beta": (1.7, -0.3)}, heldout=True),
    ShapeCase("upper_8192", {"uplo": "U", "n": 8192, "lda": 8192, "incx": 1, "incy": 1,
                             "alpha": (0.8, 0.1), "beta": (-0.5, 0.25)}, tier=LARGE),
    ShapeCase("lower_odd_4095", {"uplo": "L", "n": 4095, "lda": 4096, "incx": 1, "incy": 1,
                                 "alpha": (1.2, -0.6), "beta": (0.3, 0.7)}, tier=LARGE),
)


SYR_CASES = (
    ShapeCase("upper_strided", {"uplo": "U", "n": 37, "lda": 40, "incx": 2, "incy": 1,
                                "alpha": 0.6}),
    ShapeCase("lower", {"uplo": "L", "n": 45, "lda": 45, "incx": 1, "incy": 3, "alpha": -1.7}),
    ShapeCase("upper_small", {"uplo": "U", "n": 17, "lda": 19, "incx": 1, "incy": 1,
                              "alpha": 1.3}),
    ShapeCase("heldout_lower", {"uplo": "L", "n": 61, "lda": 67, "incx": 3, "incy": 2,
                                "alpha": 0.45}, heldout=True),
    ShapeCase("upper_4096", {"uplo": "U", "n": 4096, "lda": 4096, "incx": 1, "incy": 1,
                             "alpha": 0.75}, tier=LARGE),
    ShapeCase("lower_odd_8191", {"uplo": "L", "n": 8191, "lda": 8192, "incx": 1, "incy": 1,
                                 "alpha": -0.3}, tier=LARGE),
)

SBMV_CASES = (
    ShapeCase("upper_strided", {"uplo": "U", "n": 37, "k": 3, "lda": 5, "incx": 2, "incy": 1,
                                "alpha": 0.7, "beta": -1.3}),
    ShapeCase("lower", {"uplo": "L", "n": 50, "k": 7, "lda": 8, "incx": 1, "incy": 3,
                        "alpha": -1.1, "beta": 0.6}),
    ShapeCase("beta_zero_y_unset", {"uplo": "U", "n": 23, "k": 5, "lda": 6, "incx": 1,
                                    "incy": 1, "alpha": 1.4, "beta": 0.0}),
    ShapeCase("wide_band_lower", {"uplo": "L", "n": 20, "k": 19, "lda": 22, "incx": 2,
                                  "incy": 2, "alpha": 0.5, "beta": 1.5}),
    ShapeCase("heldout_lower", {"uplo": "L", "n": 61, "k": 12, "lda": 15, "incx": 2, "incy": 2,
                                "alpha": 0.9, "beta": 1.7}, heldout=True),
    ShapeCase("upper_8192_k64", {"uplo": "U", "n": 8192, "k": 64, "lda": 65, "incx": 1,
                                 "incy": 1, "alpha": 0.8, "beta": -0.5}, tier=LARGE),
    ShapeCase("lower_16384_k16", {"uplo": "L", "n": 16384, "k": 16, "lda": 17, "incx": 1,
                                  "incy": 1, "alpha": 1.2, "beta": 0.3}, tier=LARGE),
)

GBMV_CASES = (
    ShapeCase("notrans_strided", {"trans": "N", "m": 37, "n": 45, "kl": 3, "ku": 5, "lda": 10,
                                  "incx": 2, "incy": 1, "alpha": 0.7, "beta": -1.3}),
    ShapeCase("trans_tall", {"trans": "T", "m": 50, "n": 31, "kl": 6, "ku": 2, "lda": 9,
                             "incx": 1, "incy": 3, "alpha": -1.1, "beta": 0.6}),
    ShapeCase("beta_zero_y_unset", {"trans": "N", "m": 40, "n": 40, "kl": 0, "ku": 4, "lda": 5,
                                    "incx": 1, "incy": 1, "alpha": 1.4, "beta": 0.0}),
    ShapeCase("conj_trans_wide", {"trans": "C", "m": 23, "n": 47, "kl": 9, "ku": 0, "lda": 11,
                                  "incx": 2, "incy": 2, "alpha": 0.5, "beta": 1.5}),
    ShapeCase("heldout_trans", {"trans": "T", "m": 29, "n": 61, "kl": 4, "ku": 7, "lda": 13,
                                "incx": 3, "incy": 2, "alpha": 0.9, "beta": 1.7}, heldout=True),
    ShapeCase("notrans_8192_k32", {"trans": "N", "m": 8192, "n": 8192, "kl": 32, "ku": 32,
                                   "lda": 65, "incx": 1, "incy": 1, "alpha": 0.8,
                                   "beta": -0.5}, tier=LARGE),
    ShapeCase("trans_16384x4096", {"trans": "T", "m": 16384, "n": 4096, "kl": 16, "ku": 48,
                                   "lda": 72, "incx": 1, "incy": 1, "alpha": 1.2,
                                   "beta": 0.3}, tier=LARGE),
)

TBMV_CASES = (
    ShapeCase("upper_notrans", {"uplo": "U", "trans": "N", "diag": "N", "n": 37, "k": 4,
                                "lda": 6, "incx": 2}),
    ShapeCase("lower_trans_unit", {"uplo": "L", "trans": "T", "diag": "U", "n": 50, "k": 6,
                                   "lda": 7, "incx": 1}),
    ShapeCase("upper_trans_unit", {"uplo": "U", "trans": "T", "diag": "U", "n": 29, "k": 3,
                                   "lda": 4, "incx": 3}),
    ShapeCase("lower_notrans", {"uplo": "L", "trans": "N", "diag": "N", "n": 45, "k": 9,
                                "lda": 12, "incx": 1}),
    ShapeCase("heldout_lower_trans", {"uplo": "L", "trans": "T", "diag": "N", "n": 61, "k": 5,
                                      "lda": 8, "incx": 2}, heldout=True),
    ShapeCase("upper_4096_k32", {"uplo": "U", "trans": "N", "diag": "N", "n": 4096, "k": 32,
                                 "lda": 33, "incx": 1}, tier=LARGE),
    ShapeCase("lower_trans_unit_4096_k64", {"uplo": "L", "trans": "T", "diag": "U", "n": 4096,
                                            "k": 64, "lda": 65, "incx": 1}, tier=LARGE),
)

TRMV_CASES = (
    ShapeCase("upper_notrans", {"uplo": "U", "trans": "N", "diag": "N", "n": 37, "lda": 40,
                                "incx": 2}),
    ShapeCase("lower_trans_unit", {"uplo": "L", "trans": "T", "diag": "U", "n": 50, "lda": 50,
                                   "incx": 1}),
    ShapeCase("upper_trans", {"uplo": "U", "trans": "T", "diag": "N", "n": 29, "lda": 31,
                              "incx": 3}),
    ShapeCase("lower_notrans_unit", {"uplo": "L", "trans": "N", "diag": "U", "n": 64,
                                     "lda": 70, "incx": 1}),
    ShapeCase("heldout_upper_trans_unit", {"uplo": "U", "trans": "T", "diag": "U", "n": 45,
                                           "lda": 48, "incx": 2}, heldout=True),
    ShapeCase("lower_4096", {"uplo": "L", "trans": "N", "diag": "N", "n": 4096, "lda": 4096,
                             "incx": 1}, tier=LARGE),
    ShapeCase("upper_trans_unit_4096", {"uplo": "U", "trans": "T", "diag": "U", "n": 4096,
                                        "lda": 4100, "incx": 1}, tier=LARGE),
)

TRSV_CASES = (
    ShapeCase("lower_notrans", {"uplo": "L", "trans": "N", "diag": "N", "n": 37, "lda": 40,
                                "incx": 2}),
    ShapeCase("upper_notrans_unit", {"uplo": "U", "trans": "N", "diag": "U", "n": 50,
                                     "lda": 50, "incx": 1}),
    ShapeCase("upper_trans", {"uplo": "U", "trans": "T", "diag": "N", "n": 29, "lda": 31,
                              "incx": 3}),
    ShapeCase("lower_trans_unit", {"uplo": "L", "trans": "T", "diag": "U", "n": 64, "lda": 70,
                                   "incx": 1}),
    ShapeCase("heldout_lower_notrans_unit", {"uplo": "L", "trans": "N", "diag": "U", "n": 45,
                                             "lda": 48, "incx": 2}, heldout=True),
    ShapeCase("lower_4096", {"uplo": "L", "trans": "N", "diag": "N", "n": 4096, "lda": 4096,
                             "incx": 1}, tier=LARGE),
    ShapeCase("upper_trans_unit_4096", {"uplo": "U", "trans": "T", "diag": "U", "n": 4096,
                                        "lda": 4100, "incx": 1}, tier=LARGE),
)


# -- counts ---------------------------------------------------------------------------------
def _band_elements(rows: int, cols: int, kl: int, ku: int) -> int:
    """Entries of a rows x cols matrix within kl below and ku above the diagonal."""
    return sum(max(0, min(rows - 1, j + kl) - max(0, j - ku) + 1) for j in range(cols))


def _gbmv_entries(p: Mapping[str, Any]) -> int:
    return _band_elements(p["m"], p["n"], p["kl"], p["ku"])


def _specs() -> list[OperatorSpec]:
    specs = []
    for name in ("cublasSsymv_v2", "cublasCsymv_v2"):
        is_complex = _is_complex(name)
        width = 2 if is_complex else 1  # reals per element
        flop_scale = 4 if is_complex else 1
        specs.append(cublas_op(
            name,
            signature=("kernel(uplo: str, n: int, alpha: complex, A: Tensor, lda: int, "
                       "x: Tensor, incx: int, beta: complex, y: Tensor, incy: int) -> None"
                       if is_complex else
                       "kernel(uplo: str, n: int, alpha: float, A: Tensor, lda: int, "
                       "x: Tensor, incx: int, beta: float, y: Tensor, incy: int) -> None"),
            description=(
                f"cuBLAS {name}: y = alpha * A * x + beta * y for a symmetric n x n matrix A "
                + ("(complex symmetric, A = A^T, NOT Hermitian: the mirrored element is not "
                   "conjugated) " if is_complex else "")
                + "given by its uplo triangle, written into y in place; returns None."
                + _UPLO_NOTE + Y_BETA_NOTE + VECTOR_NOTE + COLUMN_MAJOR_NOTE
                + " Reference composed in PyTorch (triu/tril + mv): PyTorch has no symv call."
                + (" A case's alpha and beta are listed as [real, imag]; the kernel gets them "
                   "as Python complex values." if is_complex else "")),
            reference=_symv_reference(name),
            make_inputs=_symv_inputs(name),
            cases=SYMV_CASES if is_complex else real_params(SYMV_CASES),
            flops=lambda p, s=flop_scale: s * (2.0 * p["n"] * p["n"] + 3 * p["n"]),
            bytes_moved=lambda p, size, w=width: w * size * (
                triangle_elements(p["n"]) + p["n"] + 2 * p["n"]),
            tags=(FAMILY, "symv"),
            mutated_args=(8,),
            reduce_dim=lambda p: p["n"],
            reference_kernel=from_template("_symv", name=name,
                                           is_complex=str(is_complex)),
        ))
    specs.append(cublas_op(
        "cublasSsyr_v2",
        signature="kernel(uplo: str, n: int, alpha: float, x: Tensor, incx: int, A: Tensor, "
                  "lda: int) -> None",
        description=("cuBLAS cublasSsyr_v2: the symmetric rank-1 update A = alpha * x * x^T + A "
                     "of the uplo triangle of the n x n matrix A, in place; returns None. Only "
                     "that triangle is read and written: the other triangle and the padding "
                     "rows keep their values." + VECTOR_NOTE + COLUMN_MAJOR_NOTE
                     + " Reference composed in PyTorch (outer + triu/tril): PyTorch has no "
                       "syr call."),
        reference=_syr_reference, make_inputs=_syr_inputs(False),
        cases=tuple(ShapeCase(c.name, {k: v for k, v in c.params.items() if k != "incy"},
                              tier=c.tier, heldout=c.heldout) for c in SYR_CASES),
        flops=lambda p: 2.0 * triangle_elements(p["n"]),
        bytes_moved=lambda p, size: size * (2 * triangle_elements(p["n"]) + p["n"]),
        tags=(FAMILY, "syr"), mutated_args=(5,), reduce_dim=lambda p: 2,
    ))
    specs.append(cublas_op(
        "cublasDsyr2_v2",
        signature="kernel(uplo: str, n: int, alpha: float, x: Tensor, incx: int, y: Tensor, "
                  "incy: int, A: Tensor, lda: int) -> None",
        description=("cuBLAS cublasDsyr2_v2: the symmetric rank-2 update A = alpha * (x * y^T "
                     "+ y * x^T) + A of the uplo triangle of the n x n float64 matrix A, in "
                     "place; returns None. Only that triangle is read and written: the other "
                     "triangle and the padding rows keep their values." + VECTOR_NOTE
                     + COLUMN_MAJOR_NOTE + " Reference composed in PyTorch (outer + "
                       "triu/tril): PyTorch has no syr2 call."),
        reference=_syr2_reference, make_inputs=_syr_inputs(True),
        cases=SYR_CASES,
        flops=lambda p: 4.0 * triangle_elements(p["n"]),
        bytes_moved=lambda p, size: size * (2 * triangle_elements(p["n"]) + 2 * p["n"]),
        tags=(FAMILY, "syr2"), mutated_args=(7,), reduce_dim=lambda p: 3,
    ))
    specs.append(cublas_op(
        "cublasDsbmv_v2",
        signature="kernel(uplo: str, n: int, k: int, alpha: float, A: Tensor, lda: int, "
                  "x: Tensor, incx: int, beta: float, y: Tensor, incy: int) -> None",
        description=("cuBLAS cublasDsbmv_v2: y = alpha * A * x + beta * y for a symmetric n x n "
                     "float64 band matrix A with k sub- and super-diagonals, given by its uplo "
                     "triangle in band storage (lda >= k + 1), written into y in place; returns "
                     "None. uplo 'U': A(i, j) for i <= j <= i + k sits at band row k + i - j of "
                     "column j (the diagonal in band row k); uplo 'L': A(i, j) for "
                     "j <= i <= j + k sits at band row i - j of column j (the diagonal in row "
                     "0). The band element (r, j) is A[r + j * lda]; its unused corners are "
                     "never read." + Y_BETA_NOTE + VECTOR_NOTE
                     + " Reference composed in PyTorch (gathers of the band, summed): PyTorch "
                       "has no sbmv call."),
        reference=_sbmv_reference, make_inputs=_sbmv_inputs, cases=SBMV_CASES,
        flops=lambda p: 2.0 * _band_elements(p["n"], p["n"], p["k"], p["k"]) + 3 * p["n"],
        bytes_moved=lambda p, size: size * (_band_elements(p["n"], p["n"], 0, p["k"])
                                            + 3 * p["n"]),
        tags=(FAMILY, "sbmv", "band"), mutated_args=(9,),
        reduce_dim=lambda p: 2 * p["k"] + 1,
    ))
    specs.append(cublas_op(
        "cublasSgbmv_v2",
        signature="kernel(trans: str, m: int, n: int, kl: int, ku: int, alpha: float, "
                  "A: Tensor, lda: int, x: Tensor, incx: int, beta: float, y: Tensor, "
                  "incy: int) -> None",
        description=("cuBLAS cublasSgbmv_v2: y = alpha * op(A) * x + beta * y for an m x n band "
                     "matrix A with kl sub- and ku super-diagonals (lda >= kl + ku + 1), "
                     "written into y in place; returns None. trans 'N': op(A) = A, x has n "
                     "elements and y m; 'T' or 'C' (the same for real A): op(A) = A^T, x has m "
                     "elements and y n." + _BAND_NOTE + Y_BETA_NOTE + VECTOR_NOTE
                     + " Reference composed in PyTorch (gathers of the band, summed): PyTorch "
                       "has no gbmv call."),
        reference=_gbmv_reference, make_inputs=_gbmv_inputs, cases=GBMV_CASES,
        flops=lambda p: 2.0 * _gbmv_entries(p) + 3 * _gbmv_lengths(p)[1],
        bytes_moved=lambda p, size: size * (_gbmv_entries(p) + _gbmv_lengths(p)[0]
                                            + 2 * _gbmv_lengths(p)[1]),
        tags=(FAMILY, "gbmv", "band"), mutated_args=(11,),
        reduce_dim=lambda p: p["kl"] + p["ku"] + 1,
    ))
    specs.append(cublas_op(
        "cublasStbmv_v2",
        signature="kernel(uplo: str, trans: str, diag: str, n: int, k: int, A: Tensor, "
                  "lda: int, x: Tensor, incx: int) -> None",
        description=("cuBLAS cublasStbmv_v2: x = op(A) * x, in place, for a triangular n x n "
                     "band matrix A with k super-diagonals (uplo 'U') or k sub-diagonals (uplo "
                     "'L') in band storage (lda >= k + 1); returns None. uplo 'U': A(i, j) for "
                     "i <= j <= i + k sits at band row k + i - j of column j (the diagonal in "
                     "band row k); 'L': A(i, j) for j <= i <= j + k at band row i - j (the "
                     "diagonal in row 0). The band element (r, j) is A[r + j * lda]; its unused "
                     "corners are never read." + _TRIANGULAR_NOTE + VECTOR_NOTE
                     + " Reference composed in PyTorch (gathers of the band, summed): PyTorch "
                       "has no tbmv call."),
        reference=_tbmv_reference, make_inputs=_tbmv_inputs, cases=TBMV_CASES,
        flops=lambda p: 2.0 * _band_elements(p["n"], p["n"], 0, p["k"]),
        bytes_moved=lambda p, size: size * (_band_elements(p["n"], p["n"], 0, p["k"])
                                            + 2 * p["n"]),
        tags=(FAMILY, "tbmv", "band", "triangular"), mutated_args=(7,),
        reduce_dim=lambda p: p["k"] + 1,
    ))
    specs.append(cublas_op(
        "cublasStrmv_v2",
        signature="kernel(uplo: str, trans: str, diag: str, n: int, A: Tensor, lda: int, "
                  "x: Tensor, incx: int) -> None",
        description=("cuBLAS cublasStrmv_v2: x = op(A) * x, in place, for a triangular n x n "
                     "matrix A; returns None." + _TRIANGULAR_NOTE + VECTOR_NOTE
                     + COLUMN_MAJOR_NOTE + " Reference composed in PyTorch (triu/tril + mv): "
                       "PyTorch has no trmv call."),
        reference=_trmv_reference, make_inputs=_triangular_inputs(False), cases=TRMV_CASES,
        flops=lambda p: float(p["n"] * p["n"]),
        bytes_moved=lambda p, size: size * (triangle_elements(p["n"]) + 2 * p["n"]),
        tags=(FAMILY, "trmv", "triangular"), mutated_args=(6,),
        reduce_dim=lambda p: p["n"],
    ))
    specs.append(cublas_op(
        "cublasStrsv_v2",
        signature="kernel(uplo: str, trans: str, diag: str, n: int, A: Tensor, lda: int, "
                  "x: Tensor, incx: int) -> None",
        description=("cuBLAS cublasStrsv_v2: solves op(A) * x = b for a triangular n x n "
                     "matrix A, where b is given in x and the solution overwrites it; returns "
                     "None. No singularity test is done (the matrices given are strictly "
                     "diagonally dominant, so well conditioned)." + _TRIANGULAR_NOTE
                     + VECTOR_NOTE + COLUMN_MAJOR_NOTE
                     + " Reference composed in PyTorch (triu/tril + "
                       "torch.linalg.solve_triangular): PyTorch has no trsv call."),
        reference=_trsv_reference, make_inputs=_triangular_inputs(True), cases=TRSV_CASES,
        flops=lambda p: float(p["n"] * p["n"]),
        bytes_moved=lambda p, size: size * (triangle_elements(p["n"]) + 2 * p["n"]),
        tags=(FAMILY, "trsv", "triangular", "solve"), mutated_args=(6,),
        reduce_dim=lambda p: p["n"],
    ))
    return specs


def operators() -> list[OperatorSpec]:
    return _specs()
