"""cuBLAS Level 3 routines on structured matrices: symmetric (symm, syrk, syrkEx, syr2k) and
triangular (trmm, trsm, pointer-array batched trsm).

Every routine follows cuBLAS's semantics on column-major buffers with leading dimensions
(``_build``'s conventions). symm reads only the ``uplo`` triangle of A; the other triangle
holds unrelated random values. syrk, syrkEx and syr2k read and write only the ``uplo``
triangle of C: the other triangle holds random values that must stay as they were. trmm and
trsm take ``side``, ``uplo``, ``trans`` and ``diag``; with ``diag = "U"`` A's diagonal holds
NaN, since cuBLAS takes it as ones and never reads it. trsm's matrices are strictly diagonally
dominant by rows and columns (``_build.condition_triangle``), so op(A) and its transpose are
well conditioned. Every small case has leading dimensions larger than the rows (padding that
must stay untouched), and each routine with a beta has a ``beta == 0`` case whose output
triangle or matrix holds NaN on input (cuBLAS does not read it then).

None of these routines has a direct PyTorch call, so each reference is composed from ones that
do and says so: symm is addmm_ on the mirrored triangle, syrk/syr2k an addmm into the uplo
triangle (torch.where), trmm a matmul with the triangle, trsm torch.linalg.solve_triangular
(one batched call for the pointer-array batch). On NVIDIA those call cuBLAS's gemm and trsm,
so the timed baseline is a composed cuBLAS pipeline, close to but not the routine itself.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.cublas._build import (
    beta_is_zero,
    COLUMN_MAJOR_NOTE, column_major_length, condition_triangle, cublas_op, draw_buffer,
    from_template, matrix, op, precision_of, real_params, scalar, symmetric_matrix,
    triangle_elements, triangle_of,
)

FAMILY = "level3"
# The inventory page's category for Level 3 routines that are not plain GEMMs.
CATEGORY = "blas3"

_SIDE_NOTE = (" side 'L': A is m x m and multiplies from the left; 'R': A is n x n and "
              "multiplies from the right; B and C are m x n (ldb, ldc >= m).")
_A_UPLO_NOTE = (" Only the uplo triangle of A (uplo 'U': i <= j, 'L': i >= j) is read; the "
                "other triangle holds unrelated values.")
_C_UPLO_NOTE = (" Only the uplo triangle of C (uplo 'U': i <= j, 'L': i >= j) is read and "
                "written; the other triangle holds unrelated values that must stay as they "
                "were.")
_RANK_TRANS_NOTE = (" trans 'N': op(X) = X, stored n x k (ld >= n); 'T': op(X) = X^T, X "
                    "stored k x n (ld >= k). C is n x n (ldc >= n).")
_TRIANGULAR_NOTE = (" uplo 'U': A is upper triangular (only i <= j is read), 'L': lower (only "
                    "i >= j); trans 'N': op(A) = A, 'T': A^T{conj}; diag 'N': A's diagonal is "
                    "used, 'U': A is unit triangular, its diagonal is taken as ones and never "
                    "read (it may hold NaN).")
_BETA_NOTE = (" When beta == 0, C is not read on input (cuBLAS: it need not be set; it may "
              "hold NaN).")
_COMPLEX_SCALARS = (" A case's alpha and beta are listed as [real, imag]; the kernel gets them "
                    "as Python complex values.")


def _is_complex(name: str) -> bool:
    return precision_of(name)[1]


def _width(name: str) -> int:
    """Reals per element."""
    return 2 if _is_complex(name) else 1


def _order(p: Mapping[str, Any]) -> int:
    """The order of A for side-taking routines: m for side L, n for side R."""
    return p["m"] if p["side"] == "L" else p["n"]


def _nan_buffer(ctx: InputContext, length: int, is_complex: bool):  # noqa: ANN202
    return draw_buffer(ctx, length, is_complex=is_complex).fill_(float("nan"))


def _triangle_mask(n: int, uplo: str, device):  # noqa: ANN001, ANN202
    import torch

    rows = torch.arange(n, device=device)
    return rows[:, None] <= rows[None, :] if uplo == "U" else rows[:, None] >= rows[None, :]


# -- symm -----------------------------------------------------------------------------------
def _symm_case(name: str, side: str, uplo: str, m: int, n: int, pads: tuple[int, int, int],
               alpha: Any, beta: Any, *, tier: str = "small", heldout: bool = False
               ) -> ShapeCase:
    order = m if side == "L" else n
    return ShapeCase(name, {"side": side, "uplo": uplo, "m": m, "n": n, "lda": order + pads[0],
                            "ldb": m + pads[1], "ldc": m + pads[2], "alpha": alpha,
                            "beta": beta}, tier=tier, heldout=heldout)


# Written with complex scalars; the real routine takes their real parts.
SYMM_SMALL = (
    _symm_case("left_upper_padded", "L", "U", 37, 29, (3, 2, 4), (1.5, -0.5), (-0.5, 0.75)),
    _symm_case("left_lower_padded", "L", "L", 23, 45, (3, 2, 1), (-0.75, 0.25), (0.25, -1.5)),
    _symm_case("right_upper_padded", "R", "U", 31, 19, (3, 2, 3), (0.5, 1.0), (2.0, 0.5)),
    _symm_case("right_lower_beta_zero_nan_c", "R", "L", 13, 50, (3, 2, 1), (1.25, 0.75),
               (0.0, 0.0)),
    _symm_case("heldout_left_lower", "L", "L", 19, 33, (2, 1, 3), (-1.5, -0.25), (0.75, 0.5),
               heldout=True),
)
SSYMM_CASES = real_params(SYMM_SMALL) + (
    _symm_case("left_upper_4096", "L", "U", 4096, 4096, (0, 0, 0), 1.0, 0.5, tier=LARGE),
    # The activations (14336 x 4096) times a symmetric 4096 x 4096 matrix from the right.
    _symm_case("right_lower_14336x4096", "R", "L", 14336, 4096, (0, 0, 0), 1.0, 1.0,
               tier=LARGE),
)
CSYMM_CASES = SYMM_SMALL + (
    _symm_case("left_upper_2048", "L", "U", 2048, 2048, (0, 0, 0), (1.0, 0.5), (0.5, -0.25),
               tier=LARGE),
    _symm_case("right_lower_8192x1024", "R", "L", 8192, 1024, (0, 0, 0), (1.0, 0.0),
               (1.0, 0.0), tier=LARGE),
)


def _symm_inputs(is_complex: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        m, n, order = p["m"], p["n"], _order(p)
        beta = scalar(p["beta"], is_complex)
        a = draw_buffer(ctx, column_major_length(order, order, p["lda"]), is_complex=is_complex)
        b = draw_buffer(ctx, column_major_length(m, n, p["ldb"]), is_complex=is_complex)
        c_len = column_major_length(m, n, p["ldc"])
        c = (_nan_buffer(ctx, c_len, is_complex) if beta == 0
             else draw_buffer(ctx, c_len, is_complex=is_complex))
        return [p["side"], p["uplo"], m, n, scalar(p["alpha"], is_complex), a, p["lda"], b,
                p["ldb"], beta, c, p["ldc"]]

    return make


def _symm_reference(is_complex: bool) -> Callable[..., None]:
    def reference(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc):  # noqa: ANN001, N803
        order = m if side == "L" else n
        s = symmetric_matrix(matrix(A, order, order, lda, is_complex=is_complex), uplo)
        b = matrix(B, m, n, ldb, is_complex=is_complex)
        c = matrix(C, m, n, ldc, is_complex=is_complex)
        if side not in ("L", "R"):
            raise ValueError(f"side must be L or R, not {side!r}")
        left, right = (s, b) if side == "L" else (b, s)
        c.addmm_(left, right, beta=beta, alpha=alpha)  # C is not read when beta == 0

    return reference


def _symm_spec(name: str) -> OperatorSpec:
    is_complex = _is_complex(name)
    kind = "complex" if is_complex else "float"
    return cublas_op(
        name,
        signature=(f"kernel(side: str, uplo: str, m: int, n: int, alpha: {kind}, A: Tensor, "
                   f"lda: int, B: Tensor, ldb: int, beta: {kind}, C: Tensor, ldc: int) -> None"),
        description=(
            f"cuBLAS {name}: C = alpha * A @ B + beta * C (side 'L') or C = alpha * B @ A + "
            "beta * C (side 'R') for a symmetric matrix A "
            + ("(complex symmetric, A = A^T, NOT Hermitian: the mirrored element is not "
               "conjugated) " if is_complex else "")
            + "given by its uplo triangle (lda >= the order of A); C is written in place; "
            "returns None." + _SIDE_NOTE + _A_UPLO_NOTE + _BETA_NOTE
            + (" complex64 buffers (fp32 parts), exact fp32 arithmetic (no TF32)."
               + _COMPLEX_SCALARS if is_complex else " fp32, exact fp32 arithmetic (no TF32).")
            + COLUMN_MAJOR_NOTE + " Reference composed in PyTorch (triu/tril mirrored into the "
            "full symmetric matrix, then addmm_): PyTorch has no symm call."),
        reference=_symm_reference(is_complex),
        make_inputs=_symm_inputs(is_complex),
        cases=CSYMM_CASES if is_complex else SSYMM_CASES,
        flops=lambda p, s=4 if is_complex else 1: s * 2.0 * p["m"] * p["n"] * _order(p),
        bytes_moved=lambda p, size, w=_width(name): w * size * (
            triangle_elements(_order(p)) + (2 if beta_is_zero(p) else 3) * p["m"] * p["n"]),
        tags=(FAMILY, CATEGORY, "symm", "symmetric"),
        mutated_args=(10,),
        reduce_dim=_order,
        reference_kernel=from_template("_symm", name=name, is_complex=str(is_complex)),
    )


# -- syrk, syrkEx, syr2k --------------------------------------------------------------------
def _rank_case(name: str, uplo: str, trans: str, n: int, k: int, pads: tuple[int, int],
               alpha: Any, beta: Any, *, tier: str = "small", heldout: bool = False
               ) -> ShapeCase:
    """``pads``: how much lda and ldc exceed the stored rows; a padded case gives B (syr2k) a
    leading dimension of its own, lda + 2, so a kernel that uses lda for B fails."""
    lda = (n if trans == "N" else k) + pads[0]
    return ShapeCase(name, {"uplo": uplo, "trans": trans, "n": n, "k": k, "lda": lda,
                            "ldb": lda + 2 if pads[0] else lda, "ldc": n + pads[1],
                            "alpha": alpha, "beta": beta}, tier=tier, heldout=heldout)


RANK_SMALL = (
    _rank_case("upper_notrans_padded", "U", "N", 37, 29, (3, 2), (1.5, -0.5), (-0.5, 0.75)),
    _rank_case("lower_trans_padded", "L", "T", 45, 23, (3, 2), (-0.75, 0.25), (0.25, -1.5)),
    _rank_case("upper_trans_long_k", "U", "T", 31, 53, (3, 2), (0.5, 1.0), (2.0, 0.5)),
    _rank_case("lower_notrans_beta_zero_nan_c", "L", "N", 29, 17, (2, 1), (1.25, 0.75),
               (0.0, 0.0)),
    _rank_case("heldout_upper_notrans", "U", "N", 19, 41, (3, 2), (-1.5, -0.25), (0.75, 0.5),
               heldout=True),
)


def _rank_large(is_complex: bool, shapes: tuple[tuple[str, str, int, int], ...]
                ) -> tuple[ShapeCase, ...]:
    alpha, beta = ((1.0, 0.0), (0.5, 0.25)) if is_complex else (1.0, 0.5)
    return tuple(_rank_case(f"{'upper' if uplo == 'U' else 'lower'}_"
                            f"{'notrans' if trans == 'N' else 'trans'}_{n}_k{k}", uplo, trans,
                            n, k, (0, 0), alpha, beta, tier=LARGE)
                 for uplo, trans, n, k in shapes)


def _without_ldb(cases: tuple[ShapeCase, ...]) -> tuple[ShapeCase, ...]:
    return tuple(ShapeCase(c.name, {k: v for k, v in c.params.items() if k != "ldb"},
                           tier=c.tier, heldout=c.heldout) for c in cases)


SSYRK_CASES = _without_ldb(real_params(RANK_SMALL) + _rank_large(
    False, (("U", "N", 4096, 1024), ("L", "T", 4096, 4096))))
CSYRK_EX_CASES = _without_ldb(RANK_SMALL + _rank_large(
    True, (("U", "N", 2048, 1024), ("L", "T", 4096, 512))))
SSYR2K_CASES = real_params(RANK_SMALL) + _rank_large(
    False, (("U", "N", 4096, 1024), ("L", "T", 2048, 2048)))


def _stored(trans: str, n: int, k: int) -> tuple[int, int]:
    """(rows, cols) of A (and B) as stored: n x k for trans N, k x n otherwise."""
    return (n, k) if trans == "N" else (k, n)


def _rank_inputs(kind: str, is_complex: bool) -> Callable[[InputContext], list[Any]]:
    """kind: syrk, syr2k or ex (syrkEx's type arguments)."""

    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        n, k = p["n"], p["k"]
        rows, cols = _stored(p["trans"], n, k)
        beta = scalar(p["beta"], is_complex)
        a = draw_buffer(ctx, column_major_length(rows, cols, p["lda"]), is_complex=is_complex)
        operands: list[Any] = [a, p["lda"]]
        if kind == "syr2k":
            operands += [draw_buffer(ctx, column_major_length(rows, cols, p["ldb"])), p["ldb"]]
        elif kind == "ex":
            operands = [a, "CUDA_C_32F", p["lda"]]
        c = draw_buffer(ctx, column_major_length(n, n, p["ldc"]), is_complex=is_complex)
        if beta == 0:
            # NaN in the triangle that is written, not read; the other one keeps its values.
            view = matrix(c, n, n, p["ldc"], is_complex=is_complex)
            view.masked_fill_(_triangle_mask(n, p["uplo"], c.device), float("nan"))
        tail = [beta, c, "CUDA_C_32F", p["ldc"]] if kind == "ex" else [beta, c, p["ldc"]]
        return [p["uplo"], p["trans"], n, k, scalar(p["alpha"], is_complex), *operands, *tail]

    return make


def _rank_reference(kind: str, is_complex: bool) -> Callable[..., None]:
    def reference(*args: Any) -> None:
        import torch

        uplo, trans, n, k, alpha = args[:5]
        if kind == "syrk":
            A, lda, beta, C, ldc = args[5:]  # noqa: N806
        elif kind == "syr2k":
            A, lda, B, ldb, beta, C, ldc = args[5:]  # noqa: N806
        else:
            A, _, lda, beta, C, _, ldc = args[5:]  # noqa: N806
        if uplo not in ("U", "L") or trans not in ("N", "T", "C") or (
                is_complex and trans == "C"):
            raise ValueError(f"bad flags uplo={uplo!r} trans={trans!r}")
        rows, cols = _stored(trans, n, k)
        # op(X) = X or X^T, never conjugated (a real "C" is "T").
        flag = "N" if trans == "N" else "T"
        a = op(matrix(A, rows, cols, lda, is_complex=is_complex), flag)
        c = matrix(C, n, n, ldc, is_complex=is_complex)
        # torch.addmm ignores C when beta == 0, as cuBLAS does not read it then.
        if kind == "syr2k":
            b = op(matrix(B, rows, cols, ldb, is_complex=is_complex), flag)
            full = torch.addmm(c, a, b.transpose(0, 1), beta=beta, alpha=alpha)
            full.addmm_(b, a.transpose(0, 1), alpha=alpha)
        else:
            full = torch.addmm(c, a, a.transpose(0, 1), beta=beta, alpha=alpha)
        c.copy_(torch.where(_triangle_mask(n, uplo, c.device), full, c))

    return reference


def _rank_specs() -> list[OperatorSpec]:
    flop_note = (" The reference is composed (torch has no {what}): torch.addmm on the "
                 "op(A) views, copied into C's uplo triangle with torch.where.")
    return [
        cublas_op(
            "cublasSsyrk_v2",
            signature="kernel(uplo: str, trans: str, n: int, k: int, alpha: float, A: Tensor, "
                      "lda: int, beta: float, C: Tensor, ldc: int) -> None",
            description=("cuBLAS cublasSsyrk_v2: the symmetric rank-k update C = alpha * "
                         "op(A) @ op(A)^T + beta * C of the n x n matrix C, op(A) n x k, in "
                         "place; returns None. trans 'C' is taken as 'T' (real A)."
                         + _RANK_TRANS_NOTE + _C_UPLO_NOTE + _BETA_NOTE
                         + " fp32, exact fp32 arithmetic (no TF32)." + COLUMN_MAJOR_NOTE
                         + flop_note.format(what="syrk")),
            reference=_rank_reference("syrk", False),
            make_inputs=_rank_inputs("syrk", False),
            cases=SSYRK_CASES,
            flops=lambda p: 1.0 * p["n"] * (p["n"] + 1) * p["k"],
            bytes_moved=lambda p, size: size * (p["n"] * p["k"] + (
                1 if beta_is_zero(p) else 2) * triangle_elements(p["n"])),
            tags=(FAMILY, CATEGORY, "syrk", "symmetric"),
            mutated_args=(8,),
            reduce_dim=lambda p: p["k"],
            reference_kernel=from_template("_syrk", complex="False", entry="syrk"),
        ),
        cublas_op(
            "cublasCsyrkEx",
            signature="kernel(uplo: str, trans: str, n: int, k: int, alpha: complex, "
                      "A: Tensor, Atype: str, lda: int, beta: complex, C: Tensor, Ctype: str, "
                      "ldc: int) -> None",
            description=("cuBLAS cublasCsyrkEx: the complex symmetric rank-k update C = alpha "
                         "* op(A) @ op(A)^T + beta * C (transposed, NOT conjugated: syrk, not "
                         "herk) of the n x n matrix C, op(A) n x k, in place; returns None. "
                         "trans is 'N' or 'T' ('C' is not allowed for complex syrk)."
                         + _RANK_TRANS_NOTE + _C_UPLO_NOTE + _BETA_NOTE
                         + " Types: Atype = Ctype = 'CUDA_C_32F' (A and C complex64 as "
                         "interleaved float32, fp32 compute). Of the type combinations cuBLAS "
                         "takes for syrkEx, kgb models this one because the published "
                         "benchmark lists the routine as complex64, and the other input type "
                         "(CUDA_C_8I, complex int8) has no PyTorch dtype to hold or check it. "
                         "The kernel gets both type names as strings; its buffers must agree "
                         "with them. Exact fp32 arithmetic (no TF32)." + _COMPLEX_SCALARS + COLUMN_MAJOR_NOTE
                         + flop_note.format(what="syrk")),
            reference=_rank_reference("ex", True),
            make_inputs=_rank_inputs("ex", True),
            cases=CSYRK_EX_CASES,
            flops=lambda p: 4.0 * p["n"] * (p["n"] + 1) * p["k"],
            bytes_moved=lambda p, size: 2 * size * (p["n"] * p["k"] + (
                1 if beta_is_zero(p) else 2) * triangle_elements(p["n"])),
            tags=(FAMILY, CATEGORY, "syrk", "symmetric"),
            mutated_args=(9,),
            reduce_dim=lambda p: p["k"],
            reference_kernel=from_template("_syrk", complex="True", entry="syrk_ex"),
        ),
        cublas_op(
            "cublasSsyr2k_v2",
            signature="kernel(uplo: str, trans: str, n: int, k: int, alpha: float, A: Tensor, "
                      "lda: int, B: Tensor, ldb: int, beta: float, C: Tensor, ldc: int) "
                      "-> None",
            description=("cuBLAS cublasSsyr2k_v2: the symmetric rank-2k update C = alpha * "
                         "(op(A) @ op(B)^T + op(B) @ op(A)^T) + beta * C of the n x n matrix "
                         "C, op(A) and op(B) n x k, in place; returns None. A and B have their "
                         "own leading dimensions lda and ldb; trans 'C' is taken as 'T'."
                         + _RANK_TRANS_NOTE + _C_UPLO_NOTE + _BETA_NOTE
                         + " fp32, exact fp32 arithmetic (no TF32)." + COLUMN_MAJOR_NOTE
                         + flop_note.format(what="syr2k")),
            reference=_rank_reference("syr2k", False),
            make_inputs=_rank_inputs("syr2k", False),
            cases=SSYR2K_CASES,
            flops=lambda p: 2.0 * p["n"] * (p["n"] + 1) * p["k"],
            bytes_moved=lambda p, size: size * (2 * p["n"] * p["k"] + (
                1 if beta_is_zero(p) else 2) * triangle_elements(p["n"])),
            tags=(FAMILY, CATEGORY, "syr2k", "symmetric"),
            mutated_args=(10,),
            reduce_dim=lambda p: 2 * p["k"],
            reference_kernel=from_template("_syrk", complex="False", entry="syr2k"),
        ),
    ]


# -- trmm and trsm --------------------------------------------------------------------------
def _tri_case(name: str, flags: str, m: int, n: int, pads: tuple[int, int, int], alpha: Any,
              *, tier: str = "small", heldout: bool = False, batch: int | None = None
              ) -> ShapeCase:
    """``flags`` is side, uplo, trans, diag as four letters ("LUNN")."""
    side, uplo, trans, diag = flags
    order = m if side == "L" else n
    params: dict[str, Any] = {"side": side, "uplo": uplo, "trans": trans, "diag": diag,
                              "m": m, "n": n, "lda": order + pads[0], "ldb": m + pads[1],
                              "ldc": m + pads[2], "alpha": alpha}
    if batch is not None:
        params["batch"] = batch
    return ShapeCase(name, params, tier=tier, heldout=heldout)


def _no_ldc(cases: tuple[ShapeCase, ...]) -> tuple[ShapeCase, ...]:
    return tuple(ShapeCase(c.name, {k: v for k, v in c.params.items() if k != "ldc"},
                           tier=c.tier, heldout=c.heldout) for c in cases)


TRMM_CASES = (
    _tri_case("left_upper_notrans", "LUNN", 37, 29, (3, 2, 4), 1.5),
    _tri_case("left_lower_trans_unit", "LLTU", 45, 23, (2, 1, 3), -0.75),
    _tri_case("right_upper_trans", "RUTN", 31, 19, (2, 2, 1), 0.5),
    _tri_case("right_lower_notrans_unit", "RLNU", 13, 50, (2, 2, 3), 1.25),
    _tri_case("heldout_right_upper_notrans_unit", "RUNU", 19, 33, (2, 2, 1), -1.5,
              heldout=True),
    _tri_case("left_lower_4096", "LLNN", 4096, 4096, (0, 0, 0), 1.0, tier=LARGE),
    _tri_case("right_upper_trans_unit_14336x4096", "RUTU", 14336, 4096, (0, 0, 0), 0.5,
              tier=LARGE),
)
# Solve directions: side L with op(A) lower (LLN, LUT) solves forward, upper backward; side R
# the other way round. The small cases cover both directions on both sides.
STRSM_CASES = _no_ldc((
    _tri_case("left_lower_notrans", "LLNN", 37, 29, (3, 2, 0), 1.5),
    _tri_case("left_lower_trans_unit", "LLTU", 45, 23, (2, 1, 0), -0.75),
    _tri_case("right_upper_notrans", "RUNN", 31, 19, (2, 2, 0), 0.5),
    _tri_case("right_upper_trans_unit", "RUTU", 13, 50, (2, 2, 0), 1.25),
    _tri_case("heldout_left_upper_notrans", "LUNN", 19, 33, (3, 2, 0), -1.5, heldout=True),
    _tri_case("left_lower_4096", "LLNN", 4096, 4096, (0, 0, 0), 1.0, tier=LARGE),
    # X @ L^T = B, the right-looking Cholesky panel solve.
    _tri_case("right_lower_trans_8192x2048", "RLTN", 8192, 2048, (0, 0, 0), 1.0, tier=LARGE),
))
DTRSM_BATCHED_CASES = _no_ldc((
    _tri_case("left_lower_notrans", "LLNN", 21, 17, (3, 2, 0), 1.5, batch=3),
    _tri_case("left_upper_trans_unit", "LUTU", 19, 13, (2, 3, 0), -0.75, batch=4),
    _tri_case("right_lower_notrans", "RLNN", 11, 20, (3, 2, 0), 0.5, batch=2),
    _tri_case("right_lower_trans_unit", "RLTU", 17, 9, (3, 2, 0), 1.25, batch=3),
    _tri_case("heldout_left_upper_notrans", "LUNN", 23, 11, (1, 2, 0), -1.5, batch=5,
              heldout=True),
    _tri_case("batch256_128", "LLNN", 128, 128, (0, 0, 0), 1.0, batch=256, tier=LARGE),
    _tri_case("batch64_512_right_upper_trans_unit", "RUTU", 512, 512, (0, 0, 0), 0.5,
              batch=64, tier=LARGE),
))
ZTRSM_BATCHED_CASES = _no_ldc((
    _tri_case("left_lower_conjtrans", "LLCN", 21, 17, (3, 2, 0), (1.5, -0.5), batch=3),
    _tri_case("left_upper_trans_unit", "LUTU", 19, 13, (2, 3, 0), (-0.75, 0.25), batch=4),
    _tri_case("right_upper_notrans", "RUNN", 11, 20, (3, 2, 0), (0.5, 1.0), batch=2),
    _tri_case("right_upper_conjtrans_unit", "RUCU", 17, 9, (3, 2, 0), (1.25, 0.75), batch=3),
    _tri_case("heldout_left_upper_conjtrans", "LUCN", 23, 11, (1, 2, 0), (-1.5, -0.25),
              batch=5, heldout=True),
    _tri_case("batch128_128_conjtrans", "LLCN", 128, 128, (0, 0, 0), (1.0, 0.5), batch=128,
              tier=LARGE),
    _tri_case("batch32_256_right_lower", "RLNN", 256, 256, (0, 0, 0), (0.5, -0.5), batch=32,
              tier=LARGE),
))


def _triangular_a(ctx: InputContext, p: Mapping[str, Any], is_complex: bool,
                  solve: bool):  # noqa: ANN202
    """A triangular A's buffer: made well conditioned for a solve; a unit diagonal holds NaN
    (both parts, for complex), since cuBLAS never reads it."""
    order = _order(p)
    a = draw_buffer(ctx, column_major_length(order, order, p["lda"]), is_complex=is_complex)
    view = matrix(a, order, order, p["lda"], is_complex=is_complex)
    if solve:
        condition_triangle(ctx, view, p["uplo"])
    if p["diag"] == "U":
        nan = float("nan")
        view.diagonal().fill_(complex(nan, nan) if is_complex else nan)
    return a


def _trmm_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    m, n = p["m"], p["n"]
    a = _triangular_a(ctx, p, False, solve=False)
    b = draw_buffer(ctx, column_major_length(m, n, p["ldb"]))
    # C is output only: cuBLAS's out-of-place trmm never reads it.
    c = _nan_buffer(ctx, column_major_length(m, n, p["ldc"]), False)
    return [p["side"], p["uplo"], p["trans"], p["diag"], m, n, float(p["alpha"]), a, p["lda"],
            b, p["ldb"], c, p["ldc"]]


def _trmm_reference(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C, ldc):  # noqa: ANN001, ANN202, N803
    order = m if side == "L" else n
    t = op(triangle_of(matrix(A, order, order, lda), uplo, diag), trans)
    b = matrix(B, m, n, ldb)
    if side not in ("L", "R"):
        raise ValueError(f"side must be L or R, not {side!r}")
    product = t @ b if side == "L" else b @ t
    matrix(C, m, n, ldc).copy_(product.mul_(alpha))


def _trsm_inputs(is_complex: bool, batched: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        m, n = p["m"], p["n"]
        count = p.get("batch", 1)
        a = [_triangular_a(ctx, p, is_complex, solve=True) for _ in range(count)]
        b = [draw_buffer(ctx, column_major_length(m, n, p["ldb"]), is_complex=is_complex)
             for _ in range(count)]
        head = [p["side"], p["uplo"], p["trans"], p["diag"], m, n,
                scalar(p["alpha"], is_complex)]
        if batched:
            return [*head, a, p["lda"], b, p["ldb"], count]
        return [*head, a[0], p["lda"], b[0], p["ldb"]]

    return make


def _trsm_reference(is_complex: bool, batched: bool) -> Callable[..., None]:
    def reference(*args: Any) -> None:
        import torch

        side, uplo, trans, diag, m, n, alpha = args[:7]
        if batched:
            a_bufs, lda, b_bufs, ldb, count = args[7:]
            a_bufs, b_bufs = a_bufs[:count], b_bufs[:count]
        else:
            a, lda, b, ldb = args[7:]
            a_bufs, b_bufs = [a], [b]
        if side not in ("L", "R"):
            raise ValueError(f"side must be L or R, not {side!r}")
        if not b_bufs or m == 0 or n == 0:
            return
        order = m if side == "L" else n
        views = [matrix(buf, m, n, ldb, is_complex=is_complex) for buf in b_bufs]
        if batched:
            # One batched solve (torch's batched triangular solve, cuBLAS's trsmBatched on
            # NVIDIA) over the stacked pointer-array batch, then copied back into each B.
            tri = triangle_of(torch.stack([matrix(buf, order, order, lda,
                                                  is_complex=is_complex) for buf in a_bufs]),
                              uplo, diag)
            rhs = torch.stack(views)
        else:
            tri = triangle_of(matrix(a_bufs[0], order, order, lda, is_complex=is_complex),
                              uplo, diag)
            rhs = views[0]
        solution = torch.linalg.solve_triangular(
            op(tri, trans), rhs * alpha, upper=(uplo == "U") == (trans == "N"),
            left=side == "L", unitriangular=diag == "U")
        if batched:
            torch._foreach_copy_(views, list(solution.unbind(0)))
        else:
            views[0].copy_(solution)

    return reference


def _triangular_specs() -> list[OperatorSpec]:
    specs = [cublas_op(
        "cublasStrmm_v2",
        signature="kernel(side: str, uplo: str, trans: str, diag: str, m: int, n: int, "
                  "alpha: float, A: Tensor, lda: int, B: Tensor, ldb: int, C: Tensor, "
                  "ldc: int) -> None",
        description=("cuBLAS cublasStrmm_v2 in cuBLAS's out-of-place form: C = alpha * op(A) "
                     "@ B (side 'L') or C = alpha * B @ op(A) (side 'R') for a triangular "
                     "matrix A (lda >= its order); returns None. C is written and never read "
                     "(it holds NaN on input); B is left as it was." + _SIDE_NOTE
                     + _TRIANGULAR_NOTE.format(conj=" ('C' is the same for real A)")
                     + " fp32, exact fp32 arithmetic (no TF32)." + COLUMN_MAJOR_NOTE
                     + " Reference composed in PyTorch (triu/tril, then a matmul): PyTorch "
                       "has no trmm call."),
        reference=_trmm_reference,
        make_inputs=_trmm_inputs,
        cases=TRMM_CASES,
        flops=lambda p: 1.0 * p["m"] * p["n"] * _order(p),
        bytes_moved=lambda p, size: size * (triangle_elements(_order(p)) + 2 * p["m"] * p["n"]),
        tags=(FAMILY, CATEGORY, "trmm", "triangular"),
        mutated_args=(11,),
        reduce_dim=_order,
    )]
    solve = (" Solves op(A) @ X = alpha * B (side 'L', A m x m) or X @ op(A) = alpha * B "
             "(side 'R', A n x n) for X, m x n, which overwrites B (ldb >= m) in place; "
             "returns None. No singularity test is done (the matrices given are strictly "
             "diagonally dominant, so well conditioned).")
    specs.append(cublas_op(
        "cublasStrsm_v2",
        signature="kernel(side: str, uplo: str, trans: str, diag: str, m: int, n: int, "
                  "alpha: float, A: Tensor, lda: int, B: Tensor, ldb: int) -> None",
        description=("cuBLAS cublasStrsm_v2, a triangular solve with many right-hand sides."
                     + solve + _TRIANGULAR_NOTE.format(conj=" ('C' is the same for real A)")
                     + " fp32 arithmetic (no TF32)." + COLUMN_MAJOR_NOTE
                     + " Reference composed in PyTorch (triu/tril, then "
                       "torch.linalg.solve_triangular, which calls cuBLAS's trsm on NVIDIA): "
                       "PyTorch has no trsm call with cuBLAS's in-place interface."),
        reference=_trsm_reference(False, False),
        make_inputs=_trsm_inputs(False, False),
        cases=STRSM_CASES,
        flops=lambda p: 1.0 * p["m"] * p["n"] * _order(p),
        bytes_moved=lambda p, size: size * (triangle_elements(_order(p)) + 2 * p["m"] * p["n"]),
        tags=(FAMILY, CATEGORY, "trsm", "triangular", "solve"),
        mutated_args=(9,),
        reduce_dim=_order,
        reference_kernel=from_template("_trsm", complex="False", entry="trsm"),
    ))
    for name, cases in (("cublasDtrsmBatched", DTRSM_BATCHED_CASES),
                        ("cublasZtrsmBatched", ZTRSM_BATCHED_CASES)):
        is_complex = _is_complex(name)
        kind = "complex" if is_complex else "float"
        specs.append(cublas_op(
            name,
            signature=(f"kernel(side: str, uplo: str, trans: str, diag: str, m: int, n: int, "
                       f"alpha: {kind}, Aarray: list[Tensor], lda: int, Barray: list[Tensor], "
                       f"ldb: int, batchCount: int) -> None"),
            description=(
                f"cuBLAS {name}: for each batch i in 0..batchCount-1, a triangular solve with "
                "A = Aarray[i] and B = Barray[i]." + solve
                + " Aarray and Barray are Python lists of separate 1-D buffers (cuBLAS's arrays "
                "of device pointers): matrix i is Aarray[i] etc., each in its own memory; every "
                "Barray[i] is overwritten in place."
                + _TRIANGULAR_NOTE.format(conj=", 'C': A^H, the conjugate transpose"
                                          if is_complex else " ('C' is the same for real A)")
                + (" complex128 buffers (fp64 parts), fp64 arithmetic. A case's alpha is "
                   "listed as [real, imag]; the kernel gets it as a Python complex value."
                   if is_complex else " fp64 arithmetic.")
                + COLUMN_MAJOR_NOTE + " Reference composed in PyTorch: the batch stacked, "
                "one batched torch.linalg.solve_triangular, copied back into each B (torch has "
                "no pointer-array solve)."),
            reference=_trsm_reference(is_complex, True),
            make_inputs=_trsm_inputs(is_complex, True),
            cases=cases,
            flops=lambda p, s=4 if is_complex else 1: (s * 1.0 * p["batch"] * p["m"] * p["n"]
                                                       * _order(p)),
            bytes_moved=lambda p, size, w=_width(name): w * size * p["batch"] * (
                triangle_elements(_order(p)) + 2 * p["m"] * p["n"]),
            tags=(FAMILY, CATEGORY, "trsm", "triangular", "solve", "batched"),
            mutated_args=(9,),
            reduce_dim=_order,
            reference_kernel=from_template("_trsm", complex=str(is_complex),
                                           entry="trsm_batched"),
        ))
    return specs


def operators() -> list[OperatorSpec]:
    return [_symm_spec("cublasSsymm_v2"), _symm_spec("cublasCsymm_v2"), *_rank_specs(),
            *_triangular_specs()]
