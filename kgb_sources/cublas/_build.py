"""Conventions every cuBLAS family shares: precision letters, column-major buffers, complex
values as real pairs, and spec construction.

- A matrix is a 1-D buffer in column-major order with a leading dimension: element ``(i, j)``
  of an ``m x n`` matrix with leading dimension ``ld >= m`` is ``buf[i + j * ld]``. Rows
  ``m..ld-1`` of each column are padding the routine must leave untouched (the checker compares
  the whole written buffer, padding included).
- A vector is a 1-D buffer with an increment: element ``i`` is ``buf[i * inc]`` (``inc > 0``).
- Flags are the cuBLAS letters as strings: ``trans`` in ``"N"``, ``"T"``, ``"C"``; ``uplo`` in
  ``"U"``, ``"L"``; ``diag`` in ``"N"``, ``"U"``; ``side`` in ``"L"``, ``"R"``.
- Complex (C, Z) buffers are real tensors with real and imaginary parts interleaved
  (``torch.view_as_real(z).flatten()``): a complex buffer of ``n`` elements has ``2n`` reals.
  Complex scalars (``alpha``, ``beta``) are Python ``complex`` values.
- Written buffers are arguments listed in ``mutated_args``; the routine returns None, except
  routines whose cuBLAS result is a scalar (dot, nrm2, asum, iamax), which return a 1-element
  tensor (cuBLAS's device-pointer result mode).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from kgb_core.operators import SMALL, InputContext, OperatorSpec, ShapeCase
from kgb_core.source_kit import KernelFiles, spec_factory

SOURCE = "cublas"
KERNELS = KernelFiles(Path(__file__).parent / "kernels")

# Precision letter of a cuBLAS name -> the real dtype its buffers hold, and whether complex.
PRECISIONS: Mapping[str, tuple[str, bool]] = {
    "S": ("float32", False), "D": ("float64", False), "H": ("float16", False),
    "C": ("float32", True), "Z": ("float64", True),
}
COMPLEX_NOTE = (" Complex buffers hold real and imaginary parts interleaved "
                "(torch.view_as_real(z).flatten()); complex scalars are Python complex values.")
COLUMN_MAJOR_NOTE = (" Matrices are column-major 1-D buffers: element (i, j) is "
                     "buf[i + j * ld]; padding rows between m and ld stay untouched.")
VECTOR_NOTE = (" Vector element i of x is x[i * incx] (incx > 0), likewise y; the buffer "
               "elements between them are left unchanged.")
SIXTY_FOUR_NOTE = (" This is the _64 API: sizes, leading dimensions, strides and batchCount "
                   "are 64-bit integers (index with 64-bit arithmetic); the cases stay below "
                   "2^31 elements per buffer, so its results equal the 32-bit routine's.")
Y_BETA_NOTE = (" When beta == 0, y is not read on input (cuBLAS: it need not be set; it may "
               "hold NaN), and is overwritten with alpha * (the product).")


kernel_file = KERNELS.text  # the text of a shipped reference kernel, kernels/<name>.py
# The S/D/C/Z variants of one routine share one kernel file (its __FIELD__ markers filled), so
# a fix reaches all of them.
from_template = KERNELS.template


def precision_of(name: str) -> tuple[str, bool]:
    """``("float32", True)`` for ``cublasCgemm_v2``: the letter after ``cublas``."""
    letter = name[len("cublas"):][:1]
    if not name.startswith("cublas") or letter not in PRECISIONS:
        raise ValueError(f"{name} does not start with cublas<S|D|H|C|Z>")
    return PRECISIONS[letter]


def matrix(buf, rows: int, cols: int, ld: int, *, is_complex: bool = False):  # noqa: ANN001, ANN201
    """The ``rows x cols`` view of a column-major buffer (complex: a complex view)."""
    import torch

    if is_complex:
        buf = torch.view_as_complex(buf.view(-1, 2))
    return torch.as_strided(buf, (rows, cols), (1, ld))


def vector(buf, n: int, inc: int, *, is_complex: bool = False):  # noqa: ANN001, ANN201
    """The ``n`` elements ``buf[0], buf[inc], ...`` (complex: a complex view)."""
    import torch

    if is_complex:
        buf = torch.view_as_complex(buf.view(-1, 2))
    return torch.as_strided(buf, (n,), (inc,))


def op(a, trans: str):  # noqa: ANN001, ANN201
    """cuBLAS's ``op(A)``: A, its transpose, or its conjugate transpose."""
    if trans == "N":
        return a
    if trans == "T":
        return a.transpose(-2, -1)
    if trans == "C":
        return a.transpose(-2, -1).conj()
    raise ValueError(f"trans must be N, T or C, not {trans!r}")


# -- GEMM cases and counts, shared by the gemm families (level3_gemm, lt_matmul) -------------
def gemm_case(name: str, trans: str, m: int, n: int, k: int, pads: tuple[int, int, int],
              alpha: Any, beta: Any, *, tier: str = SMALL, heldout: bool = False,
              batch: int | None = None, gaps: tuple[int | None, int, int] | None = None,
              **extra: Any) -> ShapeCase:
    """A gemm case: ``pads`` is how much each leading dimension exceeds its matrix's stored
    rows; for strided batches ``gaps`` is how far each batch stride exceeds the matrix
    (``None`` for A: stride 0, one A broadcast to every batch). Complex scalars are (re, im)
    pairs, so the parameters stay JSON. ``extra`` parameters are added as they are."""
    transa, transb = trans
    params: dict[str, Any] = {
        "transa": transa, "transb": transb, "m": m, "n": n, "k": k,
        "lda": (m if transa == "N" else k) + pads[0],
        "ldb": (k if transb == "N" else n) + pads[1],
        "ldc": m + pads[2], "alpha": alpha, "beta": beta,
    }
    if batch is not None:
        params["batch"] = batch
    if gaps is not None:
        a_cols = k if transa == "N" else m
        b_cols = n if transb == "N" else k
        params["strideA"] = 0 if gaps[0] is None else params["lda"] * a_cols + gaps[0]
        params["strideB"] = params["ldb"] * b_cols + gaps[1]
        params["strideC"] = params["ldc"] * n + gaps[2]
    params.update(extra)
    return ShapeCase(name, params, tier=tier, heldout=heldout)


def gemm_stored(p: Mapping[str, Any]) -> tuple[tuple[int, int], tuple[int, int]]:
    """(rows, cols) of A and B as stored: op(A) is m x k, so A is m x k when transa == "N"
    and k x m otherwise; likewise B (k x n, or n x k)."""
    a = (p["m"], p["k"]) if p["transa"] == "N" else (p["k"], p["m"])
    b = (p["k"], p["n"]) if p["transb"] == "N" else (p["n"], p["k"])
    return a, b


def gemm_lengths(p: Mapping[str, Any]) -> tuple[int, int, int]:
    """Elements of one A, B and C buffer (a whole strided batch when strides are given)."""
    (ar, ac), (br, bc) = gemm_stored(p)
    lengths = [column_major_length(ar, ac, p["lda"]), column_major_length(br, bc, p["ldb"]),
               column_major_length(p["m"], p["n"], p["ldc"])]
    if "strideA" in p:
        for i, key in enumerate(("strideA", "strideB", "strideC")):
            lengths[i] += p[key] * (p["batch"] - 1)
    return lengths[0], lengths[1], lengths[2]


def gemm_flops(is_complex: bool) -> Callable[[Mapping[str, Any]], float]:
    per_term = 8.0 if is_complex else 2.0  # a complex multiply-add is 8 real flops
    return lambda p: per_term * p.get("batch", 1) * p["m"] * p["n"] * p["k"]


def beta_is_zero(params: Mapping[str, Any]) -> bool:
    """Whether a case's beta (real, or a complex ``(re, im)`` pair) is zero: the routine then
    does not read its output on input."""
    beta = params["beta"]
    return all(v == 0 for v in beta) if isinstance(beta, (list, tuple)) else beta == 0


def gemm_bytes(is_complex: bool, c_itemsize: int | None = None
               ) -> Callable[[Mapping[str, Any], int], float]:
    """A and B read once (a broadcast A once in all), C read unless beta == 0, C written."""

    def count(p: Mapping[str, Any], size: int) -> float:
        batch = p.get("batch", 1)
        batch_a = 1 if p.get("strideA", 1) == 0 else batch
        reals = 2 if is_complex else 1
        inputs = (batch_a * p["m"] * p["k"] + batch * p["k"] * p["n"]) * reals * size
        c_passes = 1 if beta_is_zero(p) else 2
        return inputs + c_passes * batch * p["m"] * p["n"] * reals * (c_itemsize or size)

    return count


def draw_buffer(ctx: InputContext, length: int, *, is_complex: bool = False,
                scale: float = 1.0):  # noqa: ANN201
    """A fresh buffer of ``length`` elements (``2 * length`` reals when complex)."""
    return ctx.randn(2 * length if is_complex else length, scale=scale)


def column_major_length(rows: int, cols: int, ld: int) -> int:
    return ld * (cols - 1) + rows if cols else 0


def vector_length(n: int, inc: int) -> int:
    """Elements a vector of ``n`` elements with increment ``inc`` spans in its buffer."""
    return 1 + (n - 1) * inc if n else 0


def vector_buffer(ctx: InputContext, n: int, inc: int, *, is_complex: bool = False,
                  nan: bool = False):  # noqa: ANN201
    """A fresh strided vector's buffer; ``nan`` fills it with NaN (an output cuBLAS must not
    read, such as y when beta == 0)."""
    buf = draw_buffer(ctx, vector_length(n, inc), is_complex=is_complex)
    if nan:
        buf.fill_(float("nan"))
    return buf


def scalar(value: Any, is_complex: bool) -> Any:
    """A case's alpha/beta as the routine takes it: a case lists a complex scalar as
    ``(re, im)``, so that its parameters stay JSON."""
    return complex(*value) if is_complex else float(value)


def real_params(cases: Sequence[ShapeCase]) -> tuple[ShapeCase, ...]:
    """The same cases with real alpha and beta (the real part), for the S and D variants of
    routines whose C/Z cases list complex scalars."""
    out = []
    for case in cases:
        params = dict(case.params)
        for key in ("alpha", "beta"):
            if isinstance(params.get(key), (tuple, list)):
                params[key] = params[key][0]
        out.append(ShapeCase(case.name, params, tier=case.tier, heldout=case.heldout))
    return tuple(out)


def batched_matrix(buf, batch: int, rows: int, cols: int, ld: int, stride: int,
                   is_complex: bool = False):  # noqa: ANN001, ANN201
    """The (batch, rows, cols) view of a strided batch of column-major matrices: matrix b
    starts at element ``b * stride`` (0: one matrix shared by every batch)."""
    import torch

    if is_complex:
        buf = torch.view_as_complex(buf.view(-1, 2))
    return torch.as_strided(buf, (batch, rows, cols), (stride, 1, ld))


_spec = spec_factory(SOURCE, KERNELS)


def cublas_op(name: str, *, description: str, dtypes: Sequence[str] | None = None,
              tags: Sequence[str] = (), **fields: Any) -> OperatorSpec:
    """A cuBLAS spec (OperatorSpec's fields). ``dtypes`` defaults to the one the name's
    precision letter gives (a cuBLAS routine is typed: cublasSgemm is fp32 only); cuBLASLt and
    mixed-precision routines, whose names carry no letter, pass theirs. Complex routines get a
    ``complex`` tag and the interleaving note in their description."""
    tags = set(tags)
    if dtypes is None:
        dtype, is_complex = precision_of(name)
        dtypes = (dtype,)
        if is_complex:
            tags.add("complex")
            description += COMPLEX_NOTE
    return _spec(name, description=description, dtypes=dtypes, tags=tags, **fields)


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


# -- helpers the families share (symmetric and triangular matrices, scalars) -----------------
def triangle_elements(n: int) -> int:
    """Elements of an n x n triangle, diagonal included."""
    return n * (n + 1) // 2


def symmetric_matrix(a, uplo: str):  # noqa: ANN001, ANN201
    """The full symmetric matrix from the square ``a``'s uplo triangle: the stored triangle
    mirrored, transposed and never conjugated (complex symmetric, not Hermitian)."""
    import torch

    if uplo == "U":
        return torch.triu(a) + torch.triu(a, 1).transpose(-2, -1)
    if uplo == "L":
        return torch.tril(a) + torch.tril(a, -1).transpose(-2, -1)
    raise ValueError(f"uplo must be U or L, not {uplo!r}")


def triangle_of(a, uplo: str, diag: str):  # noqa: ANN001, ANN201
    """The square matrix (or batch of them) ``a``'s uplo triangle: the other triangle zero
    (whatever ``a`` holds there), ones on the diagonal when ``diag == "U"`` (cuBLAS never reads
    a unit diagonal, so it may hold NaN)."""
    import torch

    if uplo not in ("U", "L"):
        raise ValueError(f"uplo must be U or L, not {uplo!r}")
    t = torch.triu(a) if uplo == "U" else torch.tril(a)
    if diag == "U":
        t.diagonal(dim1=-2, dim2=-1).fill_(1.0)
    elif diag != "N":
        raise ValueError(f"diag must be N or U, not {diag!r}")
    return t


def triangular_matrix(buf, n: int, ld: int, uplo: str, diag: str, *,  # noqa: ANN001, ANN201
                      is_complex: bool = False):
    """The n x n column-major buffer's uplo triangle as a dense matrix (``triangle_of``)."""
    return triangle_of(matrix(buf, n, n, ld, is_complex=is_complex), uplo, diag)


def condition_triangle(ctx: InputContext, view, uplo: str) -> None:  # noqa: ANN001
    """Make the n x n ``view``'s uplo triangle strictly diagonally dominant by rows and by
    columns, in place, so that a triangular solve with it or its transpose is well conditioned:
    the strict triangle's entries are scaled to N(0, (0.5 / n)^2), so each row's and column's
    sum of |a_ij| is about 0.4 at most, while |a_ii| is drawn from [1.5, 2.5] (a random sign,
    or a random phase for complex views). Then ||op(A)^-1|| <= 1 / (1 - 0.4). The other
    triangle keeps its values (cuBLAS does not read it)."""
    import torch

    n = view.shape[0]
    rows = torch.arange(n, device=view.device)
    strict = (rows[:, None] < rows[None, :]) if uplo == "U" else (rows[:, None] > rows[None, :])
    view.copy_(torch.where(strict, view * (0.5 / n), view))
    magnitude = ctx.uniform(n, low=1.5, high=2.5)
    if view.is_complex():
        phase = ctx.uniform(n, low=0.0, high=2 * math.pi)
        view.diagonal().copy_(torch.polar(magnitude, phase))
    else:
        sign = torch.where(ctx.uniform(n, low=0.0, high=1.0) < 0.5, -1.0, 1.0)
        view.diagonal().copy_(magnitude * sign.to(magnitude.dtype))
