"""cuBLAS Level 2 routines on general matrices: gemv (S/D/C), its pointer-array batched
(S/D/Z, and C in the ``_64`` API) and strided batched (S/D/C/Z) forms, and the rank-1 updates
ger (S), geru (C, unconjugated) and gerc (Z, y conjugated).

gemv computes ``y = alpha * op(A) * x + beta * y`` for an m x n column-major A with leading
dimension ``lda >= m`` (``_build``'s conventions): trans ``"N"`` takes op(A) = A (x has n
elements, y has m), ``"T"`` A^T and ``"C"`` A^H (x has m, y has n; for real routines "C" is
"T"). Every gemv routine's small cases cover N, T and C between them, leave padding rows in A
(lda > m) and gaps in strided vectors (inc > 1), and one has ``beta == 0`` with y pre-filled
with NaN (cuBLAS does not read y then). The batched forms also leave gaps between one batch's
buffers and the next (strided) or give each batch its own buffers (pointer arrays, as Python
lists); one strided case shares a single A across the batch (strideA = 0). ger's cases pad A
(lda > m) and stride x and y; what lies outside the m x n matrix and the strided elements must
come back untouched. Each gemv output sums one row or column of op(A), so ``reduce_dim`` is
that length; a ger element is one product added once.

References: gemv is ``torch.Tensor.addmv_`` on strided views of the buffers, a direct PyTorch
call that is cuBLAS's gemv on NVIDIA; the pointer-array batches loop over it (PyTorch has no
pointer-array gemv). The strided batches are composed: ``baddbmm_`` on (batch, len, 1) views
(PyTorch has no batched mv; on NVIDIA that is cuBLAS's strided batched gemm with n = 1). ger is
``torch.Tensor.addr_`` (y conjugated for gerc), a direct PyTorch call that PyTorch runs as its
own elementwise kernel on NVIDIA, not cuBLAS's ger.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, SMALL, InputContext, OperatorSpec, ShapeCase

from kgb_sources.cublas._build import (
    COLUMN_MAJOR_NOTE, SIXTY_FOUR_NOTE, VECTOR_NOTE, Y_BETA_NOTE, batched_matrix, beta_is_zero,
    column_major_length, cublas_op, draw_buffer, from_template, matrix, op, precision_of,
    real_params, scalar, vector, vector_buffer, vector_length,
)

FAMILY = "level2"

_TRANS_NOTE = (" trans 'N': op(A) = A, x has n elements and y has m; 'T': op(A) = A^T and 'C': "
               "op(A) = A^H (conjugate transpose; the same as 'T' for real routines), x has m "
               "elements and y has n.")
_SCALARS_NOTE = (" alpha and beta arrive as Python complex values (a case's parameters list "
                 "them as [re, im]).")
_ALPHA_NOTE = (" alpha arrives as a Python complex value (a case's parameters list it as "
               "[re, im]).")


# -- cases -----------------------------------------------------------------------------------
def _lengths(trans: str, m: int, n: int) -> tuple[int, int]:
    """(elements of x, elements of y) for op(A) of an m x n A."""
    return (n, m) if trans == "N" else (m, n)


def _gemv_case(name: str, trans: str, m: int, n: int, pad: int, incx: int, incy: int,
               alpha: Any, beta: Any, *, tier: str = SMALL, heldout: bool = False,
               batch: int | None = None, gaps: tuple[int | None, int, int] | None = None
               ) -> ShapeCase:
    """A gemv case: ``pad`` is lda - m; for strided batches ``gaps`` is how far each batch
    stride exceeds what one batch's A, x and y span (``None`` for A: strideA = 0, one A shared
    by every batch). Complex scalars are (re, im) pairs, so the parameters stay JSON."""
    params: dict[str, Any] = {"trans": trans, "m": m, "n": n, "lda": m + pad, "incx": incx,
                              "incy": incy, "alpha": alpha, "beta": beta}
    if batch is not None:
        params["batch"] = batch
    if gaps is not None:
        x_len, y_len = _lengths(trans, m, n)
        params["strideA"] = 0 if gaps[0] is None else \
            column_major_length(m, n, params["lda"]) + gaps[0]
        params["stridex"] = vector_length(x_len, incx) + gaps[1]
        params["stridey"] = vector_length(y_len, incy) + gaps[2]
    return ShapeCase(name, params, tier=tier, heldout=heldout)


# Small gemv cases in complex form (real routines take the real parts): every trans letter,
# padding rows, strided x and y, and beta == 0 with NaN in y.
GEMV_SMALL = (
    _gemv_case("notrans_odd_padded", "N", 37, 29, 4, 2, 3, (1.5, -0.5), (-0.5, 0.25)),
    _gemv_case("trans_strided_x", "T", 45, 23, 2, 3, 1, (-0.75, 0.5), (0.25, -1.0)),
    _gemv_case("conj_trans_beta_zero_nan_y", "C", 50, 61, 3, 1, 2, (0.5, 1.25), (0.0, 0.0)),
    _gemv_case("notrans_wide_short", "N", 3, 67, 5, 1, 1, (1.25, 0.0), (1.0, 0.5)),
    _gemv_case("heldout_trans", "T", 31, 19, 3, 2, 2, (-1.5, 0.75), (0.75, 0.5), heldout=True),
)

# y = W x for a decoding step (M = 1): a PyTorch Linear weight W (out x in, row-major) is the
# column-major in x out matrix, so it is gemv with trans "T"; a column-major W is trans "N".
SGEMV_LARGE = (
    _gemv_case("decode_4096x4096_n", "N", 4096, 4096, 0, 1, 1, 1.0, 0.0, tier=LARGE),
    _gemv_case("mlp_up_14336x4096_n", "N", 14336, 4096, 0, 1, 1, 1.0, 1.0, tier=LARGE),
    _gemv_case("mlp_down_14336x4096_t", "T", 14336, 4096, 0, 1, 1, 1.0, 0.5, tier=LARGE),
)
DGEMV_LARGE = (
    _gemv_case("square_4096_t", "T", 4096, 4096, 0, 1, 1, 1.0, 0.5, tier=LARGE),
    _gemv_case("rect_8192x2048_n", "N", 8192, 2048, 0, 1, 1, -1.0, 0.0, tier=LARGE),
)
CGEMV_LARGE = (
    _gemv_case("square_4096_c", "C", 4096, 4096, 0, 1, 1, (1.0, 0.5), (0.5, -0.25),
               tier=LARGE),
    _gemv_case("tall_14336x4096_n", "N", 14336, 4096, 0, 1, 1, (1.0, 0.0), (0.0, 0.0),
               tier=LARGE),
)


def _batched_small(strided: bool) -> tuple[ShapeCase, ...]:
    """Small batched cases in complex form: N, T and C, beta == 0 with NaN y, strided x/y,
    and, when strided, gaps between batches and one A shared by the batch (strideA = 0)."""
    gaps = ((5, 3, 7), (None, 0, 2), (0, 4, 0), (2, 2, 3)) if strided else (None,) * 4
    return (
        _gemv_case("notrans_padded" + ("_gaps" if strided else ""), "N", 21, 17, 3, 2, 1,
                   (1.5, -0.5), (-0.5, 0.75), batch=3, gaps=gaps[0]),
        _gemv_case(("shared_a_" if strided else "") + "trans_strided_y", "T", 19, 13, 1, 1, 3,
                   (-0.75, 0.25), (0.25, 1.0), batch=4, gaps=gaps[1]),
        _gemv_case("conj_trans_beta_zero_nan_y", "C", 11, 20, 2, 2, 2, (0.5, 1.0),
                   (0.0, 0.0), batch=2, gaps=gaps[2]),
        _gemv_case("heldout_trans", "T", 7, 37, 2, 3, 1, (-1.25, 0.5), (0.75, -0.5),
                   batch=5, gaps=gaps[3], heldout=True),
    )


def _batched_large(strided: bool, batch: int, m: int, n: int, trans: tuple[str, ...],
                   is_complex: bool) -> tuple[ShapeCase, ...]:
    """Decode attention per head as batched gemv: K (seq x head_dim, row-major) is the
    column-major head_dim x seq matrix, so the scores K q are trans "T" (m = head_dim, n =
    seq) and the output V^T p is trans "N" (C: with a conjugated transpose)."""
    one, zero = ((1.0, 0.0), (0.0, 0.0)) if is_complex else (1.0, 0.0)
    names = {"T": "scores", "C": "scores_conj", "N": "values"}
    return tuple(
        _gemv_case(f"attn_{names[t]}_{batch}x{m}x{n}_{t.lower()}", t, m, n, 0, 1, 1, one,
                   zero, batch=batch, gaps=(0, 0, 0) if strided else None, tier=LARGE)
        for t in trans)


GER_SMALL = (
    ShapeCase("odd_padded_strided", {"m": 37, "n": 29, "lda": 41, "incx": 2, "incy": 3,
                                     "alpha": (1.5, -0.5)}),
    ShapeCase("tall", {"m": 61, "n": 7, "lda": 64, "incx": 1, "incy": 1,
                       "alpha": (-0.75, 0.25)}),
    ShapeCase("single_row_strided", {"m": 1, "n": 53, "lda": 3, "incx": 3, "incy": 2,
                                     "alpha": (0.5, 1.25)}),
    ShapeCase("heldout_wide", {"m": 23, "n": 45, "lda": 26, "incx": 2, "incy": 1,
                               "alpha": (1.25, 0.75)}, heldout=True),
)


def _ger_large(*shapes: tuple[int, int], is_complex: bool) -> tuple[ShapeCase, ...]:
    alpha = (0.5, -0.25) if is_complex else 0.5
    return tuple(ShapeCase(f"rank1_{m}x{n}", {"m": m, "n": n, "lda": m, "incx": 1, "incy": 1,
                                              "alpha": alpha}, tier=LARGE)
                 for m, n in shapes)


# -- inputs ----------------------------------------------------------------------------------
def _buffer_lengths(p: Mapping[str, Any]) -> tuple[int, int, int]:
    """Elements of one A, x and y buffer (a whole strided batch when strides are given)."""
    x_len, y_len = _lengths(p["trans"], p["m"], p["n"])
    lengths = [column_major_length(p["m"], p["n"], p["lda"]), vector_length(x_len, p["incx"]),
               vector_length(y_len, p["incy"])]
    if "strideA" in p:
        for i, key in enumerate(("strideA", "stridex", "stridey")):
            lengths[i] += p[key] * (p["batch"] - 1)
    return lengths[0], lengths[1], lengths[2]


def _gemv_inputs(kind: str, is_complex: bool) -> Callable[[InputContext], list[Any]]:
    """Inputs in the routine's C argument order; kind is gemv, strided or batched."""

    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        alpha, beta = scalar(p["alpha"], is_complex), scalar(p["beta"], is_complex)
        len_a, len_x, len_y = _buffer_lengths(p)
        count = p.get("batch", 1) if kind == "batched" else 1

        def draw(length: int, nan: bool = False) -> list[Any]:
            # beta == 0: y's whole buffer is NaN, which cuBLAS must not read (the strided gaps
            # stay NaN too, and are compared like every other element).
            bufs = [draw_buffer(ctx, length, is_complex=is_complex) for _ in range(count)]
            return [b.fill_(float("nan")) for b in bufs] if nan else bufs

        a, x, y = draw(len_a), draw(len_x), draw(len_y, nan=beta == 0)
        head = [p["trans"], p["m"], p["n"], alpha]
        if kind == "batched":
            return [*head, a, p["lda"], x, p["incx"], beta, y, p["incy"], count]
        if kind == "strided":
            return [*head, a[0], p["lda"], p["strideA"], x[0], p["incx"], p["stridex"], beta,
                    y[0], p["incy"], p["stridey"], p["batch"]]
        return [*head, a[0], p["lda"], x[0], p["incx"], beta, y[0], p["incy"]]

    return make


def _ger_inputs(is_complex: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        m, n = p["m"], p["n"]
        x = vector_buffer(ctx, m, p["incx"], is_complex=is_complex)
        y = vector_buffer(ctx, n, p["incy"], is_complex=is_complex)
        a = draw_buffer(ctx, column_major_length(m, n, p["lda"]), is_complex=is_complex)
        return [m, n, scalar(p["alpha"], is_complex), x, p["incx"], y, p["incy"], a, p["lda"]]

    return make


# -- references ------------------------------------------------------------------------------
def _batched_vector(buf: Any, batch: int, n: int, inc: int, stride: int,
                    is_complex: bool) -> Any:
    """The (batch, n, 1) view of a strided batch of strided vectors (a column per batch, the
    shape torch.baddbmm takes)."""
    import torch

    if is_complex:
        buf = torch.view_as_complex(buf.view(-1, 2))
    return torch.as_strided(buf, (batch, n, 1), (stride, inc, 1))


def _gemv_reference(kind: str, is_complex: bool) -> Callable[..., None]:
    def reference(*args: Any) -> None:
        trans, m, n, alpha = args[:4]
        if kind == "strided":
            a, lda, stride_a, x, incx, stride_x, beta, y, incy, stride_y, batch = args[4:]
        else:
            a, lda, x, incx, beta, y, incy = args[4:11]
        # BLAS's quick return: with m or n zero nothing is done, y is not even scaled.
        if m <= 0 or n <= 0:
            return
        x_len, y_len = _lengths(trans, m, n)
        if kind == "strided":
            if batch <= 0:
                return
            va = op(batched_matrix(a, batch, m, n, lda, stride_a, is_complex), trans)
            vx = _batched_vector(x, batch, x_len, incx, stride_x, is_complex)
            vy = _batched_vector(y, batch, y_len, incy, stride_y, is_complex)
            vy.baddbmm_(va, vx, beta=beta, alpha=alpha)  # y not read when beta == 0
            return
        triples = list(zip(a, x, y))[:args[11]] if kind == "batched" else [(a, x, y)]
        for one_a, one_x, one_y in triples:
            va = op(matrix(one_a, m, n, lda, is_complex=is_complex), trans)
            vy = vector(one_y, y_len, incy, is_complex=is_complex)
            vy.addmv_(va, vector(one_x, x_len, incx, is_complex=is_complex), beta=beta,
                      alpha=alpha)  # torch ignores y when beta == 0, as cuBLAS does

    return reference


def _ger_reference(is_complex: bool, conjugate: bool) -> Callable[..., None]:
    def reference(m, n, alpha, x, incx, y, incy, A, lda):  # noqa: ANN001, N803
        if m <= 0 or n <= 0:
            return
        yv = vector(y, n, incy, is_complex=is_complex)
        matrix(A, m, n, lda, is_complex=is_complex).addr_(
            vector(x, m, incx, is_complex=is_complex), yv.conj() if conjugate else yv,
            alpha=alpha)

    return reference


# -- counts ----------------------------------------------------------------------------------
def _gemv_flops(is_complex: bool) -> Callable[[Mapping[str, Any]], float]:
    # A complex multiply-add is 8 real flops; alpha and beta cost about 3 (x4) per output.
    scale = 4.0 if is_complex else 1.0

    def count(p: Mapping[str, Any]) -> float:
        y_len = _lengths(p["trans"], p["m"], p["n"])[1]
        return scale * p.get("batch", 1) * (2.0 * p["m"] * p["n"] + 3.0 * y_len)

    return count


def _gemv_bytes(is_complex: bool) -> Callable[[Mapping[str, Any], int], float]:
    """A read once (a shared A once in all), x read, y read unless beta == 0, y written."""

    def count(p: Mapping[str, Any], size: int) -> float:
        batch = p.get("batch", 1)
        batch_a = 1 if p.get("strideA", 1) == 0 else batch
        x_len, y_len = _lengths(p["trans"], p["m"], p["n"])
        y_passes = 1 if beta_is_zero(p) else 2
        reals = 2 if is_complex else 1
        return reals * size * (batch_a * p["m"] * p["n"]
                               + batch * (x_len + y_passes * y_len))

    return count


# -- specs -----------------------------------------------------------------------------------
_GEMV_ARGS = ("trans: str, m: int, n: int, alpha: {s}, A: Tensor, lda: int, x: Tensor, "
              "incx: int, beta: {s}, y: Tensor, incy: int")
_STRIDED_ARGS = ("trans: str, m: int, n: int, alpha: {s}, A: Tensor, lda: int, strideA: int, "
                 "x: Tensor, incx: int, stridex: int, beta: {s}, y: Tensor, incy: int, "
                 "stridey: int, batchCount: int")
_BATCHED_ARGS = ("trans: str, m: int, n: int, alpha: {s}, Aarray: list[Tensor], lda: int, "
                 "xarray: list[Tensor], incx: int, beta: {s}, yarray: list[Tensor], "
                 "incy: int, batchCount: int")
_GEMV_MEANING = ("y = alpha * op(A) * x + beta * y for an m x n matrix A (lda >= m), written "
                 "into y in place; returns None.")
_BATCH_MEANING = ("For each batch i in 0..batchCount-1, y_i = alpha * op(A_i) * x_i + beta * "
                  "y_i for m x n matrices A_i (lda >= m), each y_i written in place; returns "
                  "None.")


def _precision_note(name: str, scalars: str = _SCALARS_NOTE) -> str:
    dtype, is_complex = precision_of(name)
    if not is_complex:
        return " Precision: " + ("fp32 buffers and arithmetic." if dtype == "float32"
                                 else "fp64 buffers and arithmetic.")
    return (" Precision: " + ("complex64 buffers (fp32 parts), fp32 arithmetic."
                              if dtype == "float32" else
                              "complex128 buffers (fp64 parts), fp64 arithmetic.")
            + scalars)


def _gemv_spec(name: str, kind: str, cases: tuple[ShapeCase, ...], entry: str) -> OperatorSpec:
    _dtype, is_complex = precision_of(name)
    args = {"gemv": _GEMV_ARGS, "strided": _STRIDED_ARGS, "batched": _BATCHED_ARGS}[kind]
    if kind == "gemv":
        layout = _GEMV_MEANING
        reference_note = (" The reference is torch's addmv_ on strided views of the buffers "
                          "(cuBLAS's gemv on NVIDIA).")
        mutated = (9,)
    elif kind == "strided":
        layout = (_BATCH_MEANING + " Batch i's A starts at A's element i * strideA, its x "
                  "at x's element i * stridex and its y at y's element i * stridey (strides in "
                  "elements, complex elements for complex routines); strideA == 0 means one A "
                  "shared by every batch. Elements between one batch's y and the next stay "
                  "untouched.")
        reference_note = (" The reference is composed (PyTorch has no batched mv): torch's "
                          "baddbmm_ on (batch, length, 1) views of x and y.")
        mutated = (11,)
    else:
        layout = (_BATCH_MEANING + " Aarray, xarray and yarray are Python lists of separate "
                  "1-D buffers (cuBLAS's arrays of device pointers): batch i's A is Aarray[i], "
                  "its x xarray[i] and its y yarray[i], each in its own memory; each yarray[i] "
                  "is written in place.")
        reference_note = (" The reference loops over the batch with torch's addmv_ (PyTorch "
                          "has no pointer-array gemv).")
        mutated = (9,)
    description = (f"cuBLAS {name}: " + layout + _TRANS_NOTE + Y_BETA_NOTE + VECTOR_NOTE
                   + _precision_note(name) + COLUMN_MAJOR_NOTE + reference_note)
    if name.endswith("_64"):
        description += SIXTY_FOUR_NOTE + f" Otherwise it is {name[:-3]}, semantics and all."
    return cublas_op(
        name,
        signature=f"kernel({args.format(s='complex' if is_complex else 'float')}) -> None",
        description=description,
        reference=_gemv_reference(kind, is_complex),
        make_inputs=_gemv_inputs(kind, is_complex),
        cases=cases if is_complex else real_params(cases),
        flops=_gemv_flops(is_complex),
        bytes_moved=_gemv_bytes(is_complex),
        tags=(FAMILY, "gemv") + (("batched",) if kind != "gemv" else ()),
        mutated_args=mutated,
        reduce_dim=lambda p: _lengths(p["trans"], p["m"], p["n"])[0],
        reference_kernel=from_template("_gemv", name=name, entry=entry,
                                       complex=str(is_complex)),
    )


_GER_WHAT = {
    "cublasSger_v2": ("ger", "A = alpha * x * y^T + A", False),
    "cublasCgeru_v2": ("geru", "A = alpha * x * y^T + A (unconjugated: y is not conjugated)",
                       False),
    "cublasZgerc_v2": ("gerc", "A = alpha * x * y^H + A (y conjugated: A(i, j) += alpha * "
                               "x_i * conj(y_j))", True),
}


def _ger_spec(name: str, cases: tuple[ShapeCase, ...]) -> OperatorSpec:
    operation, meaning, conjugate = _GER_WHAT[name]
    _dtype, is_complex = precision_of(name)
    reals = 2 if is_complex else 1
    return cublas_op(
        name,
        signature=("kernel(m: int, n: int, alpha: {s}, x: Tensor, incx: int, y: Tensor, "
                   "incy: int, A: Tensor, lda: int) -> None").format(
                       s="complex" if is_complex else "float"),
        description=(f"cuBLAS {name}: the rank-1 update {meaning} of an m x n matrix A "
                     "(lda >= m), in place; returns None. x has m elements, y has n. Only the "
                     "m x n matrix is written: the padding rows m..lda-1 keep their values."
                     + VECTOR_NOTE + _precision_note(name, _ALPHA_NOTE)
                     + COLUMN_MAJOR_NOTE + " The reference is torch's addr_ on views of the "
                     "buffers" + (" with y conjugated" if conjugate else "")
                     + " (a direct PyTorch call; on NVIDIA PyTorch runs its own elementwise "
                       "kernel for it, not cuBLAS's ger)."),
        reference=_ger_reference(is_complex, conjugate),
        make_inputs=_ger_inputs(is_complex),
        cases=cases if is_complex else real_params(cases),
        flops=lambda p, s=4.0 if is_complex else 1.0: s * 2.0 * p["m"] * p["n"],
        bytes_moved=lambda p, size, r=reals: r * size * (2.0 * p["m"] * p["n"] + p["m"]
                                                         + p["n"]),
        tags=(FAMILY, operation, "rank1"),
        mutated_args=(7,),
        reduce_dim=lambda p: 2,
        reference_kernel=from_template("_ger", name=name, complex=str(is_complex),
                                       conj=str(conjugate)),
    )


def operators() -> list[OperatorSpec]:
    strided, batched = _batched_small(True), _batched_small(False)
    return [
        _gemv_spec("cublasSgemv_v2", "gemv", GEMV_SMALL + SGEMV_LARGE, "gemv"),
        _gemv_spec("cublasDgemv_v2", "gemv", GEMV_SMALL + DGEMV_LARGE, "gemv"),
        _gemv_spec("cublasCgemv_v2", "gemv", GEMV_SMALL + CGEMV_LARGE, "gemv"),
        _gemv_spec("cublasSgemvBatched", "batched",
                   batched + _batched_large(False, 32, 128, 4096, ("T", "N"), False),
                   "gemv_batched"),
        _gemv_spec("cublasDgemvBatched", "batched",
                   batched + _batched_large(False, 32, 128, 2048, ("T",), False),
                   "gemv_batched"),
        _gemv_spec("cublasZgemvBatched", "batched",
                   batched + _batched_large(False, 16, 128, 1024, ("C",), True),
                   "gemv_batched"),
        _gemv_spec("cublasCgemvBatched_64", "batched",
                   batched + _batched_large(False, 32, 128, 4096, ("C", "N"), True),
                   "gemv_batched"),
        _gemv_spec("cublasSgemvStridedBatched", "strided",
                   strided + _batched_large(True, 32, 128, 4096, ("T", "N"), False),
                   "gemv_strided_batched"),
        _gemv_spec("cublasDgemvStridedBatched", "strided",
                   strided + _batched_large(True, 32, 128, 2048, ("T", "N"), False),
                   "gemv_strided_batched"),
        _gemv_spec("cublasCgemvStridedBatched", "strided",
                   strided + _batched_large(True, 32, 128, 4096, ("C", "N"), True),
                   "gemv_strided_batched"),
        _gemv_spec("cublasZgemvStridedBatched", "strided",
                   strided + _batched_large(True, 16, 128, 1024, ("C",), True),
                   "gemv_strided_batched"),
        _ger_spec("cublasSger_v2",
                  GER_SMALL + _ger_large((4096, 4096), (14336, 4096), is_complex=False)),
        _ger_spec("cublasCgeru_v2", GER_SMALL + _ger_large((4096, 4096), is_complex=True)),
        _ger_spec("cublasZgerc_v2", GER_SMALL + _ger_large((2048, 2048), is_complex=True)),
    ]
