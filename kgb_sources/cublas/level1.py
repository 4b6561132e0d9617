"""cuBLAS Level 1: vector-vector routines (copy, swap, axpy, scal, rot, dot, asum, nrm2,
iamax, iamin) on strided 1-D buffers.

A vector is a buffer with an increment: element ``i`` is ``buf[i * inc]`` (complex: the pair
``buf[2 * i * inc], buf[2 * i * inc + 1]``), and the buffers hold exactly ``(n - 1) * inc + 1``
elements, so the gaps between strided elements exist and must stay untouched. Routines that
write vectors return None; the scalar-result ones (dot, asum, nrm2, iamax, iamin) return a new
tensor, as cuBLAS does in device-pointer result mode: one element, two reals (re, im) for a
complex dot, an int32 1-based index for iamax/iamin.

The references are PyTorch on strided views of the buffers. On NVIDIA ``torch.dot``/``vdot``
call cuBLAS's dot routines; copy, swap, axpy, scal, rot, asum, nrm2 and iamax/iamin have no
direct torch call of cuBLAS, so their references are composed from torch's own elementwise and
reduction kernels, which the descriptions say.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, SMALL, InputContext, OperatorSpec, ShapeCase

from kgb_sources.cublas._build import (
    cublas_op, draw_buffer, from_template, precision_of, vector,
)

FAMILY = "level1"

# (name, n, incx, incy, heldout): odd and prime lengths, unit and non-unit increments, and
# increments that differ between x and y, so a kernel that uses one for both fails.
SMALL_VECTORS = (
    ("n67_unit", 67, 1, 1, False),
    ("n53_incx3_incy2", 53, 3, 2, False),
    ("n31_incx1_incy4", 31, 1, 4, False),
    ("n5_incx2_incy1", 5, 2, 1, False),
    ("heldout_n61_incx2_incy3", 61, 2, 3, True),
)
# Memory-bound sizes: 2^24 elements, the largest that keeps one vector at 1 GiB (2^28 fp32
# reals, 2^27 fp64 or complex64, 2^26 complex128), and a strided one (a row of a column-major
# matrix, say).
LARGE_BYTES = 1 << 30


def _large_vectors(real_dtype: str, is_complex: bool) -> tuple[tuple[str, int, int, int], ...]:
    element_bytes = (8 if real_dtype == "float64" else 4) * (2 if is_complex else 1)
    biggest = LARGE_BYTES // element_bytes
    return (
        ("n16M_unit", 1 << 24, 1, 1),
        (f"n{biggest >> 20}M_unit", biggest, 1, 1),
        ("n4M_inc2", 1 << 22, 2, 2),
    )


# Scalars per case, in order: never 0 or 1, so a dropped alpha or rotation term shows.
ALPHAS = (0.75, -1.25, 2.5, -0.3, 1.5, -2.0, 0.6, 3.25)
ROTATIONS = ((0.8, 0.6), (-0.28, 0.96), (0.6, -0.8), (1.3, 0.45), (0.96, 0.28), (0.5, -1.2),
             (-0.6, 0.8), (0.8, -0.6))


def _cases(two_vectors: bool, real_dtype: str, is_complex: bool,
           scalars: Callable[[int], Mapping[str, Any]]) -> tuple[ShapeCase, ...]:
    rows = [(name, n, incx, incy, heldout, SMALL) for name, n, incx, incy, heldout
            in SMALL_VECTORS]
    rows += [(name, n, incx, incy, False, LARGE)
             for name, n, incx, incy in _large_vectors(real_dtype, is_complex)]
    cases = []
    for index, (name, n, incx, incy, heldout, tier) in enumerate(rows):
        params: dict[str, Any] = {"n": n, "incx": incx}
        if two_vectors:
            params["incy"] = incy
        elif tier == SMALL:
            # One vector: take the case's non-unit increment, whichever vector had it.
            params["incx"] = max(incx, incy)
            name = f"n{n}_unit" if params["incx"] == 1 else f"n{n}_incx{params['incx']}"
            name = f"heldout_{name}" if heldout else name
        params.update(scalars(index))
        cases.append(ShapeCase(name, params, tier=tier, heldout=heldout))
    return tuple(cases)



def _length(n: int, inc: int) -> int:
    return (n - 1) * inc + 1 if n > 0 else 0


def _no_scalars(_index: int) -> Mapping[str, Any]:
    return {}


def _alpha(index: int) -> Mapping[str, Any]:
    return {"alpha": ALPHAS[index % len(ALPHAS)]}


def _rotation(index: int) -> Mapping[str, Any]:
    c, s = ROTATIONS[index % len(ROTATIONS)]
    return {"c": c, "s": s}


# -- inputs ----------------------------------------------------------------------------------
def _x_inputs(is_complex: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        return [p["n"], draw_buffer(ctx, _length(p["n"], p["incx"]), is_complex=is_complex),
                p["incx"]]

    return make


def _xy_inputs(is_complex: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        x = draw_buffer(ctx, _length(p["n"], p["incx"]), is_complex=is_complex)
        y = draw_buffer(ctx, _length(p["n"], p["incy"]), is_complex=is_complex, scale=2.0)
        return [p["n"], x, p["incx"], y, p["incy"]]

    return make


def _axpy_inputs(ctx: InputContext) -> list[Any]:
    n, x, incx, y, incy = _xy_inputs(False)(ctx)
    return [n, ctx.params["alpha"], x, incx, y, incy]


def _scal_inputs(ctx: InputContext) -> list[Any]:
    n, x, incx = _x_inputs(False)(ctx)
    return [n, ctx.params["alpha"], x, incx]


def _rot_inputs(ctx: InputContext) -> list[Any]:
    return [*_xy_inputs(False)(ctx), ctx.params["c"], ctx.params["s"]]


def _extreme_inputs(largest: bool) -> Callable[[InputContext], list[Any]]:
    """x with a planted tie for the extreme |x_i| at two seeded positions p < q: -v at p and
    +v at q, so the tie holds only after the absolute value (a kernel comparing signed values
    picks q, or another index). cuBLAS returns the first, p."""

    def make(ctx: InputContext) -> list[Any]:
        n, x, incx = _x_inputs(False)(ctx)
        if n >= 2:
            p, q = sorted(int(v) for v in ctx.randint(2, low=0, high=n).tolist())
            q = q if q != p else (p + 1 if p + 1 < n else p - 1)
            p, q = min(p, q), max(p, q)
            # randn never reaches 10 (|z| > 10 has probability 1e-23 per element) and almost
            # never gives an exact 0, so the planted values are the unique extremes.
            value = 10.0 if largest else 0.0
            x[p * incx] = -value
            x[q * incx] = value
        return [n, x, incx]

    return make


# -- references ------------------------------------------------------------------------------
def _copy_reference(is_complex: bool) -> Callable[..., None]:
    def reference(n, x, incx, y, incy):  # noqa: ANN001
        vector(y, n, incy, is_complex=is_complex).copy_(vector(x, n, incx, is_complex=is_complex))

    return reference


def _swap_reference(is_complex: bool) -> Callable[..., None]:
    def reference(n, x, incx, y, incy):  # noqa: ANN001
        xv = vector(x, n, incx, is_complex=is_complex)
        yv = vector(y, n, incy, is_complex=is_complex)
        saved = xv.clone()
        xv.copy_(yv)
        yv.copy_(saved)

    return reference


def _axpy_reference(n, alpha, x, incx, y, incy):  # noqa: ANN001, ANN202
    vector(y, n, incy).add_(vector(x, n, incx), alpha=alpha)


def _scal_reference(n, alpha, x, incx):  # noqa: ANN001, ANN202
    vector(x, n, incx).mul_(alpha)


def _rot_reference(n, x, incx, y, incy, c, s):  # noqa: ANN001, ANN202
    xv, yv = vector(x, n, incx), vector(y, n, incy)
    new_x = c * xv + s * yv
    new_y = c * yv - s * xv
    xv.copy_(new_x)
    yv.copy_(new_y)


def _dot_reference(is_complex: bool, conj: bool) -> Callable[..., Any]:
    def reference(n, x, incx, y, incy):  # noqa: ANN001, ANN202
        import torch

        xv = vector(x, n, incx, is_complex=is_complex)
        yv = vector(y, n, incy, is_complex=is_complex)
        result = (torch.vdot if conj else torch.dot)(xv, yv).reshape(1)
        return torch.view_as_real(result).flatten().clone() if is_complex else result

    return reference


def _asum_reference(n, x, incx):  # noqa: ANN001, ANN202
    return vector(x, n, incx).abs().sum().reshape(1)


def _nrm2_reference(n, x, incx):  # noqa: ANN001, ANN202
    import torch

    return torch.linalg.vector_norm(vector(x, n, incx)).reshape(1)


def _extreme_reference(largest: bool) -> Callable[..., Any]:
    def reference(n, x, incx):  # noqa: ANN001, ANN202
        import torch

        # torch.argmax/argmin return the first index of the extreme value, as cuBLAS does.
        magnitude = vector(x, n, incx).abs()
        index = torch.argmax(magnitude) if largest else torch.argmin(magnitude)
        return (index + 1).to(torch.int32).reshape(1)

    return reference


# -- counts ----------------------------------------------------------------------------------
def _elements(p: Mapping[str, Any], is_complex: bool) -> int:
    return p["n"] * (2 if is_complex else 1)


def _bytes(vector_passes: int, result_reals: int = 0, result_bytes: int = 0,
           is_complex: bool = False) -> Callable[[Mapping[str, Any], int], float]:
    """``vector_passes`` n-element vectors read or written once, plus the result."""

    def count(p: Mapping[str, Any], size: int) -> float:
        return vector_passes * _elements(p, is_complex) * size + result_reals * size + result_bytes

    return count


# -- descriptions ----------------------------------------------------------------------------
def _vectors_note(two: bool, is_complex: bool = False) -> str:
    subject = ("Vectors x (increment incx) and y (increment incy) are 1-D buffers" if two
               else "Vector x (increment incx) is a 1-D buffer")
    element = ("the complex element i is the pair (buf[2 * i * inc], buf[2 * i * inc + 1])"
               if is_complex else "element i is buf[i * inc]")
    return (f" {subject}: {element} for i < n, and a buffer holds (n - 1) * inc + 1 "
            f"elements; the elements between strided ones must stay untouched. Increments are "
            f"positive.")


COMPOSED = (" The reference is composed from torch's elementwise kernels on strided views "
            "(torch has no call of cuBLAS's {what}).")


def _spec(name: str, **kwargs: Any) -> OperatorSpec:
    kwargs["tags"] = (FAMILY, *kwargs.get("tags", ()))
    return cublas_op(name, **kwargs)


def _copy_spec(name: str) -> OperatorSpec:
    real, is_complex = precision_of(name)
    return _spec(
        name,
        signature="kernel(n: int, x: Tensor, incx: int, y: Tensor, incy: int) -> None",
        description=(f"cuBLAS {name}: copies x into y, y[i * incy] = x[i * incx] for i < n, "
                     f"in {'complex' if is_complex else 'real'} {real} elements; writes y in "
                     f"place and returns None; x must be left unchanged."
                     + _vectors_note(True, is_complex) + COMPOSED.format(what="copy")),
        reference=_copy_reference(is_complex), make_inputs=_xy_inputs(is_complex),
        cases=_cases(True, real, is_complex, _no_scalars),
        flops=lambda p: 0.0, bytes_moved=_bytes(2, is_complex=is_complex),
        tags=("copy",), mutated_args=(3,),
        reference_kernel=from_template(
            "_copy", name=name, width="2" if is_complex else "1",
            element=("Complex elements are interleaved (re, im) pairs, WIDTH = 2 reals."
                     if is_complex else "Real elements, WIDTH = 1.")),
    )


def _swap_spec(name: str) -> OperatorSpec:
    real, is_complex = precision_of(name)
    return _spec(
        name,
        signature="kernel(n: int, x: Tensor, incx: int, y: Tensor, incy: int) -> None",
        description=(f"cuBLAS {name}: exchanges x and y, x[i * incx] <-> y[i * incy] for "
                     f"i < n, in {'complex' if is_complex else 'real'} {real} elements; writes "
                     f"both x and y in place and returns None."
                     + _vectors_note(True, is_complex) + COMPOSED.format(what="swap")),
        reference=_swap_reference(is_complex), make_inputs=_xy_inputs(is_complex),
        cases=_cases(True, real, is_complex, _no_scalars),
        flops=lambda p: 0.0, bytes_moved=_bytes(4, is_complex=is_complex),
        tags=("swap",), mutated_args=(1, 3),
        reference_kernel=from_template(
            "_swap", name=name, width="2" if is_complex else "1",
            element=("Complex elements are interleaved (re, im) pairs, WIDTH = 2 reals."
                     if is_complex else "Real elements, WIDTH = 1.")),
    )


def _axpy_spec(name: str) -> OperatorSpec:
    real, _ = precision_of(name)
    return _spec(
        name,
        signature=("kernel(n: int, alpha: float, x: Tensor, incx: int, y: Tensor, incy: int) "
                   "-> None"),
        description=(f"cuBLAS {name}: y[i * incy] = alpha * x[i * incx] + y[i * incy] for "
                     f"i < n, computed in {real} (alpha taken at {real} precision); writes y "
                     f"in place and returns None; x must be left unchanged."
                     + _vectors_note(True) + COMPOSED.format(what="axpy")),
        reference=_axpy_reference, make_inputs=_axpy_inputs,
        cases=_cases(True, real, False, _alpha),
        flops=lambda p: 2.0 * p["n"], bytes_moved=_bytes(3),
        tags=("axpy",), mutated_args=(4,),
        reference_kernel=from_template("_axpy", name=name, dtype=real),
    )


def _dot_spec(name: str, conj: bool) -> OperatorSpec:
    real, is_complex = precision_of(name)
    if is_complex:
        formula = ("sum conj(x_i) * y_i (x conjugated)" if conj
                   else "sum x_i * y_i (unconjugated)")
        result = (f"Returns a new {real} tensor of 2 elements, the real and imaginary parts "
                  f"of the result.")
    else:
        formula, result = "sum x_i * y_i", f"Returns a new 1-element {real} tensor."
    operation = {"cublasCdotu_v2": "dotu", "cublasZdotc_v2": "dotc"}.get(name, "dot")
    return _spec(
        name,
        signature="kernel(n: int, x: Tensor, incx: int, y: Tensor, incy: int) -> Tensor",
        description=(f"cuBLAS {name}: the dot product {formula} over i < n with x_i = "
                     f"x[i * incx] and y_i = y[i * incy], accumulated in {real}. {result} "
                     f"x and y must be left unchanged." + _vectors_note(True, is_complex)
                     + f" The reference is torch.{'vdot' if conj else 'dot'} on strided views "
                     f"(cuBLAS's dot on NVIDIA)."),
        reference=_dot_reference(is_complex, conj), make_inputs=_xy_inputs(is_complex),
        cases=_cases(True, real, is_complex, _no_scalars),
        flops=lambda p: (8.0 if is_complex else 2.0) * p["n"],
        bytes_moved=_bytes(2, result_reals=2 if is_complex else 1, is_complex=is_complex),
        # Each real output sums 2n real products when complex, n when real.
        reduce_dim=lambda p: (2 if is_complex else 1) * p["n"],
        tags=("dot",),
        reference_kernel=from_template(
            "_dot", name=name, operation=operation, formula=formula, dtype=real,
            complex=str(is_complex), conj=str(conj),
            result=("Returns (re, im) as a new 2-element tensor." if is_complex
                    else "Returns a new 1-element tensor.")),
    )


def _norm_spec(name: str, square: bool) -> OperatorSpec:
    real, _ = precision_of(name)
    operation = "nrm2" if square else "asum"
    formula = "sqrt(sum x_i^2)" if square else "sum |x_i|"
    reference_note = (" The reference is torch.linalg.vector_norm on a strided view "
                      "(torch's own reduction: torch has no call of cuBLAS's nrm2)."
                      if square else COMPOSED.format(what="asum").replace(
                          "elementwise kernels", "abs and sum"))
    return _spec(
        name,
        signature="kernel(n: int, x: Tensor, incx: int) -> Tensor",
        description=(f"cuBLAS {name}: {operation}, {formula} over i < n with x_i = "
                     f"x[i * incx], accumulated in {real}; returns a new 1-element {real} "
                     f"tensor; x must be left unchanged." + _vectors_note(False)
                     + reference_note),
        reference=_nrm2_reference if square else _asum_reference,
        make_inputs=_x_inputs(False), cases=_cases(False, real, False, _no_scalars),
        flops=lambda p: 2.0 * p["n"] + (1 if square else 0),
        bytes_moved=_bytes(1, result_reals=1), reduce_dim=lambda p: p["n"],
        tags=(operation,),
        reference_kernel=from_template(
            "_vector_norm", name=name, operation=operation, formula=formula, dtype=real,
            square=str(square),
            finish_note=", then takes the square root" if square else ""),
    )


def _extreme_spec(name: str, largest: bool) -> OperatorSpec:
    # cublasIsamax: the precision letter follows "cublasI", so it is given here.
    real = {"s": "float32", "d": "float64"}[name[len("cublasI")]]
    operation = "iamax" if largest else "iamin"
    extreme = "largest" if largest else "smallest"
    return _spec(
        name,
        signature="kernel(n: int, x: Tensor, incx: int) -> Tensor",
        description=(f"cuBLAS {name}: {operation}, the 1-based index (as cuBLAS, a Fortran "
                     f"convention) of the first element of x with the {extreme} absolute "
                     f"value |x_i| over i < n, x_i = x[i * incx] ({real}); on ties the smallest "
                     f"index wins. Returns a new 1-element int32 tensor; x must be left "
                     f"unchanged." + _vectors_note(False)
                     + f" The reference is torch.{'argmax' if largest else 'argmin'} of |x| "
                     f"plus one (torch has no call of cuBLAS's {operation}); the inputs plant a "
                     f"tie of opposite signs, so the first-index rule is checked."),
        reference=_extreme_reference(largest), make_inputs=_extreme_inputs(largest),
        cases=_cases(False, real, False, _no_scalars), dtypes=(real,),
        flops=lambda p: float(p["n"]), bytes_moved=_bytes(1, result_bytes=4),
        tags=(operation,),
        reference_kernel=from_template("_iamax", name=name, operation=operation,
                                       extreme=extreme, largest=str(largest)),
    )


def _scal_spec() -> OperatorSpec:
    name = "cublasSscal_v2"
    return _spec(
        name,
        signature="kernel(n: int, alpha: float, x: Tensor, incx: int) -> None",
        description=(f"cuBLAS {name}: x[i * incx] = alpha * x[i * incx] for i < n, in "
                     f"float32; writes x in place and returns None." + _vectors_note(False)
                     + COMPOSED.format(what="scal")),
        reference=_scal_reference, make_inputs=_scal_inputs,
        cases=_cases(False, "float32", False, _alpha),
        flops=lambda p: float(p["n"]), bytes_moved=_bytes(2),
        tags=("scal",), mutated_args=(2,),
    )


def _rot_spec() -> OperatorSpec:
    name = "cublasSrot_v2"
    return _spec(
        name,
        signature=("kernel(n: int, x: Tensor, incx: int, y: Tensor, incy: int, c: float, "
                   "s: float) -> None"),
        description=(f"cuBLAS {name}: applies the plane rotation (c, s) to x and y, for i < n "
                     f"x[i * incx] = c * x_i + s * y_i and y[i * incy] = -s * x_i + c * y_i, "
                     f"with x_i, y_i the values before the call, in float32 (c and s need not "
                     f"satisfy c^2 + s^2 = 1); writes x and y in place and returns None."
                     + _vectors_note(True) + COMPOSED.format(what="rot")),
        reference=_rot_reference, make_inputs=_rot_inputs,
        cases=_cases(True, "float32", False, _rotation),
        flops=lambda p: 6.0 * p["n"], bytes_moved=_bytes(4),
        tags=("rot",), mutated_args=(1, 3),
    )


def operators() -> list[OperatorSpec]:
    return [
        _copy_spec("cublasCcopy_v2"),
        _copy_spec("cublasDcopy_v2"),
        _swap_spec("cublasZswap_v2"),
        _swap_spec("cublasSswap_v2"),
        _axpy_spec("cublasSaxpy_v2"),
        _axpy_spec("cublasDaxpy_v2"),
        _scal_spec(),
        _rot_spec(),
        _dot_spec("cublasSdot_v2", conj=False),
        _dot_spec("cublasCdotu_v2", conj=False),
        _dot_spec("cublasZdotc_v2", conj=True),
        _norm_spec("cublasDasum_v2", square=False),
        _norm_spec("cublasSnrm2_v2", square=True),
        _extreme_spec("cublasIsamax_v2", largest=True),
        _extreme_spec("cublasIsamin_v2", largest=False),
    ]

