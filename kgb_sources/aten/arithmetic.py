"""Binary arithmetic beyond add/sub/mul/div: in-place updates (add_, div_, masked_fill_),
rsub, floor_divide and remainder (floor rounding, Python-style signs), NaN-aware max/min
(fmax ignores NaN, maximum/minimum propagate it), heaviside, logaddexp2, where, lerp and
bitwise_and.

The float ops that are one expression of two same-dtype tensors reuse pointwise's ``binary``
template; the others (integer dtypes, in-place outputs, scalars, three operands) render the
``elementwise`` template (see _elementwise.py). Inputs are drawn so that the cases are not
trivial: NaNs for the NaN-aware ops, exact zeros for heaviside, negative dividends and
divisors for the floor ops, equal values for logaddexp2.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import FLOATS, aten_op, from_template, numel
from kgb_sources.aten._elementwise import (
    BINARY_WRAPPER, INTS, away_from_zero, binary_bytes, binary_cases, binary_flops,
    broadcast_shape, elementwise_kernel, like_layout, tensor, ties, with_nans,
)

# -- in-place: add_, div_ ------------------------------------------------------------------
# "a" is written in place, so b broadcasts into a's shape (never the other way).
INPLACE_CASES = (
    ShapeCase("same_shape", {"a": (37, 129), "b": (37, 129)}),
    ShapeCase("row_broadcast_alpha", {"a": (33, 65), "b": (65,), "alpha": -0.5}),
    ShapeCase("column_broadcast_3d", {"a": (3, 17, 40), "b": (17, 1), "alpha": 2.0}),
    ShapeCase("transposed_destination", {"a": (40, 24), "b": (40, 24), "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d_broadcast", {"a": (2, 7, 11, 13), "b": (7, 1, 13), "alpha": 0.25},
              heldout=True),
    ShapeCase("llm_residual", {"a": (8192, 4096), "b": (8192, 4096)}, tier=LARGE),
    ShapeCase("bias_broadcast", {"a": (16, 1024, 4096), "b": (4096,)}, tier=LARGE),
)


def _inplace_bytes(p: Mapping[str, Any], size: int) -> float:
    return (2 * numel(p["a"]) + numel(p["b"])) * size  # a read and written, b read


def _add__inputs(ctx: InputContext) -> list[Any]:
    a = tensor(ctx, ctx.params["a"], ctx.randn, ctx.params.get("transposed", False))
    return [a, ctx.randn(*ctx.params["b"]), ctx.params.get("alpha", 1)]


# With alpha, ATen's CPU kernels for fp16 round alpha * b to fp16 at some positions (measured
# on torch 2.13: 8 of 100k elements one fp16 ulp off the once-rounded fp32 result), while its
# CUDA kernels compute in fp32 (opmath) and round once. The references compute in fp32 and round
# once, on every chip; the native call is the timing baseline.
def _add__reference(a, b, alpha=1):  # noqa: ANN001, ANN202
    import torch

    return a.copy_(torch.add(a.float(), b.float(), alpha=alpha))


def _add__baseline(a, b, alpha=1):  # noqa: ANN001, ANN202
    return a.add_(b, alpha=alpha)


def _div__inputs(ctx: InputContext) -> list[Any]:
    a = tensor(ctx, ctx.params["a"], ctx.randn, ctx.params.get("transposed", False))
    return [a, away_from_zero(ctx, *ctx.params["b"])]


def _div__reference(a, b):  # noqa: ANN001, ANN202
    return a.div_(b)


# -- rsub ----------------------------------------------------------------------------------
RSUB_CASES = (
    ShapeCase("same_shape", {"a": (37, 129), "b": (37, 129)}),
    ShapeCase("row_broadcast_alpha", {"a": (33, 65), "b": (65,), "alpha": 2.5}),
    ShapeCase("scalar_other_alpha", {"a": (3, 17, 40), "scalar": 1.5, "alpha": -0.75}),
    ShapeCase("transposed", {"a": (40, 24), "b": (40, 24), "transposed": True, "alpha": 0.5}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d_broadcast", {"a": (2, 7, 11, 13), "b": (7, 1, 13), "alpha": 3.0},
              heldout=True),
    ShapeCase("llm_residual", {"a": (8192, 4096), "b": (8192, 4096), "alpha": 2.0}, tier=LARGE),
)


def _rsub_inputs(ctx: InputContext) -> list[Any]:
    a = tensor(ctx, ctx.params["a"], ctx.randn, ctx.params.get("transposed", False))
    b = ctx.params["scalar"] if "scalar" in ctx.params else ctx.randn(*ctx.params["b"])
    return [a, b, ctx.params.get("alpha", 1)]


def _rsub_reference(a, b, alpha=1):  # noqa: ANN001, ANN202
    import torch

    # In fp32, rounded once to the promoted dtype (see _add__reference on why).
    dtype = torch.result_type(a, b)
    wide_b = b.float() if isinstance(b, torch.Tensor) else b
    return torch.rsub(a.float(), wide_b, alpha=alpha).to(dtype)


def _rsub_baseline(a, b, alpha=1):  # noqa: ANN001, ANN202
    import torch

    return torch.rsub(a, b, alpha=alpha)


def _rsub_shape(p: Mapping[str, Any]) -> tuple[int, ...]:
    return broadcast_shape(p["a"], p.get("b", ()))


# -- floor_divide, remainder ------------------------------------------------------------------
FLOOR_CASES = binary_cases()

# ATen's div_floor_floating (aten/src/ATen/native/BinaryOps.h): the quotient of a - fmod(a, b),
# stepped down when fmod's sign differs from b's, then rounded; Triton's float `%` is fmod and
# its integer `//` and `%` truncate (C semantics), so both are corrected to floor here.
FLOOR_DIVIDE_HELPERS = """
@triton.jit
def _floor_divide(a, b, FLOAT: tl.constexpr):
    if FLOAT:
        mod = a % b
        div = (a - mod) / b
        div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1.0, div)
        floordiv = tl.math.floor(div)
        floordiv = tl.where(div - floordiv > 0.5, floordiv + 1.0, floordiv)
        # copysign(0, a / b): 0 * (a / b) keeps the quotient's sign
        quotient = tl.where(div != 0, floordiv, 0.0 * (a / b))
    else:
        quotient = a // b
        quotient = tl.where(((a % b) != 0) & ((a < 0) != (b < 0)), quotient - 1, quotient)
    return quotient
"""

# ATen's remainder: fmod (float) or C `%` (int), plus b where the signs differ, so the result
# takes the divisor's sign, as Python's `%` does. Triton's `%` is exactly fmod / C `%`.
REMAINDER_HELPERS = """
@triton.jit
def _remainder(a, b):
    mod = a % b
    return tl.where((mod != 0) & ((mod < 0) != (b < 0)), mod + b, mod)
"""


def _floor_inputs(ctx: InputContext) -> list[Any]:
    if ctx.dtype.is_floating_point:
        draw = lambda *shape: ctx.randn(*shape, scale=4.0)  # noqa: E731 - |a| often > |b|
    else:
        draw = lambda *shape: ctx.randint(*shape, low=-60, high=61, dtype=ctx.dtype)  # noqa: E731
    a = tensor(ctx, ctx.params["a"], draw, ctx.params.get("transposed", False))
    return [a, away_from_zero(ctx, *ctx.params["b"])]


def _torch2(name: str) -> Callable[[Any, Any], Any]:
    def call(a, b):  # noqa: ANN001, ANN202
        import torch

        return getattr(torch, name)(a, b)

    call.__name__ = f"torch_{name}"
    return call


# -- fmax, maximum, minimum, heaviside, logaddexp2: pointwise's binary template ----------------
def _nan_inputs(ctx: InputContext) -> list[Any]:
    """randn operands with about 20% NaNs each, so some positions have one NaN, some two."""
    a = tensor(ctx, ctx.params["a"], ctx.randn, ctx.params.get("transposed", False))
    return [with_nans(ctx, a), with_nans(ctx, ctx.randn(*ctx.params["b"]))]


def _heaviside_inputs(ctx: InputContext) -> list[Any]:
    """x from {-1.5, ..., 1.5}: exact zeros (where ``values`` is taken) are frequent."""
    x = tensor(ctx, ctx.params["a"], lambda *s: ties(ctx, *s), ctx.params.get("transposed", False))
    return [x, ctx.randn(*ctx.params["b"])]


def _logaddexp2_inputs(ctx: InputContext) -> list[Any]:
    """randn * 4 operands with about a quarter of the elements of a copied from b (a == b)."""
    torch = ctx.torch
    shape = broadcast_shape(ctx.params["a"], ctx.params["b"])
    b = ctx.randn(*ctx.params["b"], scale=4.0)
    a = tensor(ctx, ctx.params["a"], lambda *s: ctx.randn(*s, scale=4.0),
               ctx.params.get("transposed", False))
    if tuple(a.shape) == tuple(shape):
        equal = ctx.uniform(*shape, low=0.0, high=1.0, dtype=torch.float32) < 0.25
        a = like_layout(torch.where(equal.to(a.device), b.expand(shape), a), a)
    return [a, b]


NAN_EXPR = "(a != a) | (b != b)"
TEMPLATE_BINARY = {
    # name: (Triton expression of fp32 a and b, description, input factory, flops/element)
    "fmax": ("tl.where(a != a, b, tl.where(b != b, a, tl.maximum(a, b)))",
             "torch.fmax(a, b): elementwise maximum that ignores NaN: where exactly one of "
             "a, b is NaN the other is returned; NaN only where both are. Inputs hold NaNs.",
             _nan_inputs, 1),
    "maximum": (f"tl.where({NAN_EXPR}, a + b, tl.maximum(a, b))",
                "torch.maximum(a, b): elementwise maximum that propagates NaN: NaN wherever "
                "a or b is NaN. Inputs hold NaNs.", _nan_inputs, 1),
    "minimum": (f"tl.where({NAN_EXPR}, a + b, tl.minimum(a, b))",
                "torch.minimum(a, b): elementwise minimum that propagates NaN: NaN wherever "
                "a or b is NaN. Inputs hold NaNs.", _nan_inputs, 1),
    "heaviside": ("tl.where(a == 0, b, tl.where(a > 0, 1.0, 0.0))",
                  "torch.heaviside(x, values): 0 where x < 0, values where x == 0, 1 where "
                  "x > 0 (NaN x gives 0, as ATen's `x == 0 ? values : x > 0`). x holds many "
                  "exact zeros.", _heaviside_inputs, 1),
    # ATen's logaddexp2: a where a == b is infinite, else max + log1p(2**-|a-b|) / ln 2.
    "logaddexp2": ("tl.where((a == b) & (tl.abs(a) == float('inf')), a, tl.maximum(a, b)"
                   " + tl.log2(1.0 + tl.exp2(-tl.abs(a - b))))",
                   "torch.logaddexp2(a, b) = log2(2**a + 2**b), computed stably as "
                   "max(a, b) + log2(1 + 2**-|a - b|) (so a == b gives a + 1). About a quarter "
                   "of the elements are equal pairs.", _logaddexp2_inputs, 6),
}


def _template_binary_spec(name: str, expr: str, description: str,
                          make: Callable[[InputContext], list[Any]], flops: int) -> OperatorSpec:
    signature = ("kernel(x: Tensor, values: Tensor) -> Tensor" if name == "heaviside"
                 else "kernel(a: Tensor, b: Tensor) -> Tensor")
    return aten_op(
        name,
        signature=signature,
        description=description + " Both operands have the same float dtype and broadcast "
                    "together; the output is a new contiguous tensor of the broadcast shape and "
                    "that dtype; the first operand may be non-contiguous.",
        reference=_torch2(name),
        make_inputs=make,
        cases=binary_cases(),
        flops=lambda p, k=flops: binary_flops(p, k),
        bytes_moved=binary_bytes,
        tags=("pointwise", "elementwise", "binary", "broadcast"),
        reference_kernel=from_template("binary", expr=expr),
    )


# -- masked_fill_ ------------------------------------------------------------------------------
MASKED_FILL_CASES = (
    ShapeCase("same_shape_neg_inf", {"x": (37, 129), "mask": (37, 129), "value": float("-inf")}),
    ShapeCase("row_mask", {"x": (33, 65), "mask": (65,), "value": 0.3}),
    ShapeCase("attention_mask_3d", {"x": (3, 17, 40), "mask": (1, 17, 40), "value": -10000.0}),
    ShapeCase("transposed_x", {"x": (40, 24), "mask": (40, 1), "value": 2.5, "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"x": (2, 7, 11, 13), "mask": (7, 1, 13), "value": -1.25},
              heldout=True),
    ShapeCase("causal_scores", {"x": (8, 32, 512, 512), "mask": (512, 512),
                                "value": float("-inf")}, tier=LARGE),
)


def _masked_fill_inputs(ctx: InputContext) -> list[Any]:
    x = tensor(ctx, ctx.params["x"], ctx.randn, ctx.params.get("transposed", False))
    mask = ctx.uniform(*ctx.params["mask"], low=0.0, high=1.0, dtype=ctx.torch.float32) < 0.4
    return [x, mask, ctx.params["value"]]


def _masked_fill_reference(x, mask, value):  # noqa: ANN001, ANN202
    return x.masked_fill_(mask, value)


# -- where, lerp ------------------------------------------------------------------------------
WHERE_CASES = (
    ShapeCase("same_shape", {"cond": (37, 129), "a": (37, 129), "b": (37, 129)}),
    ShapeCase("three_way_broadcast", {"cond": (33, 1), "a": (33, 65), "b": (65,)}),
    ShapeCase("mask_3d", {"cond": (1, 17, 40), "a": (3, 17, 40), "b": (3, 1, 40)}),
    ShapeCase("transposed", {"cond": (40, 24), "a": (40, 24), "b": (40, 24), "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"cond": (7, 1, 13), "a": (2, 7, 11, 13), "b": (11, 1)},
              heldout=True),
    ShapeCase("llm_masked", {"cond": (8192, 4096), "a": (8192, 4096), "b": (8192, 4096)},
              tier=LARGE),
)


def _where_shape(p: Mapping[str, Any]) -> tuple[int, ...]:
    return broadcast_shape(p["cond"], p["a"], p["b"])


def _where_inputs(ctx: InputContext) -> list[Any]:
    cond = ctx.uniform(*ctx.params["cond"], low=0.0, high=1.0, dtype=ctx.torch.float32) < 0.5
    a = tensor(ctx, ctx.params["a"], ctx.randn, ctx.params.get("transposed", False))
    return [cond, a, ctx.randn(*ctx.params["b"])]


def _where_reference(cond, a, b):  # noqa: ANN001, ANN202
    import torch

    return torch.where(cond, a, b)


LERP_CASES = (
    ShapeCase("scalar_weight", {"start": (37, 129), "end": (37, 129), "weight": 0.3}),
    ShapeCase("scalar_weight_high", {"start": (33, 65), "end": (65,), "weight": 0.75}),
    ShapeCase("tensor_weight_broadcast", {"start": (3, 17, 40), "end": (3, 17, 40),
                                          "weight": (17, 1)}),
    ShapeCase("transposed_tensor_weight", {"start": (40, 24), "end": (40, 24),
                                           "weight": (40, 24), "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"start": (2, 7, 11, 13), "end": (7, 1, 13), "weight": (11, 13)},
              heldout=True),
    ShapeCase("ema_update", {"start": (8192, 4096), "end": (8192, 4096), "weight": 0.1},
              tier=LARGE),
)


def _lerp_shape(p: Mapping[str, Any]) -> tuple[int, ...]:
    weight = p["weight"] if isinstance(p["weight"], tuple) else ()
    return broadcast_shape(p["start"], p["end"], weight)


def _lerp_inputs(ctx: InputContext) -> list[Any]:
    start = tensor(ctx, ctx.params["start"], ctx.randn, ctx.params.get("transposed", False))
    end = ctx.randn(*ctx.params["end"])
    weight = ctx.params["weight"]
    if isinstance(weight, tuple):
        weight = ctx.uniform(*weight, low=-0.5, high=1.5)  # both branches of ATen's formula
    return [start, end, weight]


def _lerp_reference(start, end, weight):  # noqa: ANN001, ANN202
    import torch

    return torch.lerp(start, end, weight)


# -- bitwise_and -------------------------------------------------------------------------------
def _bitwise_inputs(ctx: InputContext) -> list[Any]:
    draw = lambda *s: ctx.randint(*s, low=-(1 << 20), high=1 << 20, dtype=ctx.dtype)  # noqa: E731
    a = tensor(ctx, ctx.params["a"], draw, ctx.params.get("transposed", False))
    return [a, draw(*ctx.params["b"])]


def operators() -> list[OperatorSpec]:
    elementwise_tags = ("pointwise", "elementwise", "binary", "broadcast")
    inplace_tags = ("pointwise", "elementwise", "inplace", "broadcast")
    specs = [
        aten_op(
            "add_",
            signature="kernel(a: Tensor, b: Tensor, alpha: float = 1) -> Tensor",
            description="Tensor.add_(b, alpha=alpha): a += alpha * b in place, b broadcast "
                        "into a's shape (a's shape never changes); both have the same float "
                        "dtype; computed in fp32 and rounded once. Returns a itself (the same "
                        "tensor object). a may be non-contiguous (then it must be written "
                        "through its strides).",
            reference=_add__reference,
            baseline=_add__baseline,
            make_inputs=_add__inputs,
            cases=INPLACE_CASES,
            flops=lambda p: 2 * numel(p["a"]),
            bytes_moved=_inplace_bytes,
            tags=inplace_tags,
            mutated_args=(0,),
            reference_kernel=elementwise_kernel("x0 + p0 * x1", """
                def kernel(a, b, alpha=1):
                    return _elementwise(a, [a, b], alpha)
            """),
        ),
        aten_op(
            "div_",
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="Tensor.div_(b): true division a /= b in place (rounding_mode=None), b "
                        "broadcast into a's shape; same float dtype; b is kept away from zero. "
                        "Returns a itself. a may be non-contiguous.",
            reference=_div__reference,
            make_inputs=_div__inputs,
            cases=INPLACE_CASES,
            flops=lambda p: numel(p["a"]),
            bytes_moved=_inplace_bytes,
            tags=inplace_tags,
            mutated_args=(0,),
            reference_kernel=elementwise_kernel("x0 / x1", """
                def kernel(a, b):
                    return _elementwise(a, [a, b])
            """),
        ),
        aten_op(
            "rsub",
            signature="kernel(a: Tensor, b: Tensor | float, alpha: float = 1) -> Tensor",
            description="torch.rsub(a, b, alpha=alpha) = b - alpha * a (the reversed sub), with "
                        "broadcasting, computed in fp32 and rounded once; b is a tensor of a's "
                        "dtype or a Python float (rsub.Scalar). Output: a new tensor of the "
                        "broadcast shape and a's dtype. a may be non-contiguous.",
            reference=_rsub_reference,
            baseline=_rsub_baseline,
            make_inputs=_rsub_inputs,
            cases=RSUB_CASES,
            flops=lambda p: 2 * numel(_rsub_shape(p)),
            bytes_moved=lambda p, size: (numel(p["a"]) + numel(p.get("b", ()))
                                         + numel(_rsub_shape(p))) * size,
            tags=elementwise_tags,
            reference_kernel=elementwise_kernel("x1 - p0 * x0", """
                def kernel(a, b, alpha=1):
                    b = _as_tensor(b, a)
                    shape = torch.broadcast_shapes(a.shape, b.shape)
                    out = torch.empty(shape, dtype=torch.result_type(a, b), device=a.device)
                    return _elementwise(out, [a, b], alpha)
            """),
        ),
        aten_op(
            "floor_divide",
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="torch.floor_divide(a, b): a / b rounded toward negative infinity "
                        "(floor, not truncation: -7 // 2 == -4), with broadcasting. Float dtypes "
                        "follow ATen's div_floor_floating (quotient of a - fmod(a, b), stepped "
                        "down where fmod's sign differs from b's, then rounded); integer dtypes "
                        "are exact. b is nonzero; both have the same dtype; output: a new tensor "
                        "of that dtype. a may be non-contiguous.",
            reference=_torch2("floor_divide"),
            make_inputs=_floor_inputs,
            cases=FLOOR_CASES,
            dtypes=FLOATS + INTS,
            flops=lambda p: binary_flops(p, 4),
            bytes_moved=binary_bytes,
            tags=elementwise_tags,
            reference_kernel=elementwise_kernel("_floor_divide(x0, x1, FLOAT)", BINARY_WRAPPER,
                                                FLOOR_DIVIDE_HELPERS),
        ),
        aten_op(
            "remainder",
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="torch.remainder(a, b): Python-style modulus, a - floor(a / b) * b, "
                        "whose result has the sign of the divisor b (ATen: fmod, plus b where "
                        "fmod's sign differs from b's; integer dtypes are exact). b is nonzero; "
                        "same dtype; broadcasting; output a new tensor of that dtype. a may be "
                        "non-contiguous.",
            reference=_torch2("remainder"),
            make_inputs=_floor_inputs,
            cases=FLOOR_CASES,
            dtypes=FLOATS + INTS,
            flops=lambda p: binary_flops(p, 3),
            bytes_moved=binary_bytes,
            tags=elementwise_tags,
            reference_kernel=elementwise_kernel("_remainder(x0, x1)", BINARY_WRAPPER,
                                                REMAINDER_HELPERS),
        ),
        aten_op(
            "masked_fill_",
            signature="kernel(x: Tensor, mask: Tensor, value: float) -> Tensor",
            description="Tensor.masked_fill_(mask, value): x[i] = value where mask (bool, "
                        "broadcast into x's shape) is True, x unchanged where it is False; in "
                        "place; value is a Python float (possibly -inf) converted to x's dtype. "
                        "Returns x itself. x may be non-contiguous.",
            reference=_masked_fill_reference,
            make_inputs=_masked_fill_inputs,
            cases=MASKED_FILL_CASES,
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: 2 * numel(p["x"]) * size + numel(p["mask"]),
            tags=("pointwise", "elementwise", "inplace", "broadcast"),
            mutated_args=(0,),
            reference_kernel=elementwise_kernel("tl.where(x1 != 0, p0, x0)", """
                def kernel(x, mask, value):
                    return _elementwise(x, [x, mask], value)
            """),
        ),
        aten_op(
            "where",
            signature="kernel(cond: Tensor, a: Tensor, b: Tensor) -> Tensor",
            description="torch.where(cond, a, b): a where cond (bool) is True, else b; the "
                        "three broadcast together; a and b have the same float dtype, which the "
                        "output (a new contiguous tensor of the broadcast shape) has. a may be "
                        "non-contiguous.",
            reference=_where_reference,
            make_inputs=_where_inputs,
            cases=WHERE_CASES,
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: numel(p["cond"]) + (numel(p["a"]) + numel(p["b"])
                                                            + numel(_where_shape(p))) * size,
            tags=("pointwise", "elementwise", "broadcast"),
            reference_kernel=elementwise_kernel("tl.where(x0 != 0, x1, x2)", """
                def kernel(cond, a, b):
                    shape = torch.broadcast_shapes(cond.shape, a.shape, b.shape)
                    out = torch.empty(shape, dtype=torch.result_type(a, b), device=a.device)
                    return _elementwise(out, [cond, a, b])
            """),
        ),
        aten_op(
            "lerp",
            signature="kernel(start: Tensor, end: Tensor, weight: Tensor | float) -> Tensor",
            description="torch.lerp(start, end, weight) = start + weight * (end - start), with "
                        "ATen's formula: where |weight| < 0.5, start + weight * (end - start), "
                        "else end - (end - start) * (1 - weight); computed in fp32. weight is a "
                        "Python float (lerp.Scalar, used in fp32, not rounded to the tensors' "
                        "dtype) or a tensor of their dtype; all broadcast; output: a new tensor "
                        "of the broadcast shape and start's dtype. start may be non-contiguous.",
            reference=_lerp_reference,
            make_inputs=_lerp_inputs,
            cases=LERP_CASES,
            flops=lambda p: 4 * numel(_lerp_shape(p)),
            bytes_moved=lambda p, size: (numel(p["start"]) + numel(p["end"])
                                         + numel(_lerp_shape(p))) * size,
            tags=("pointwise", "elementwise", "broadcast"),
            reference_kernel=elementwise_kernel(
                "tl.where(tl.abs(x2) < 0.5, x0 + x2 * (x1 - x0), x1 - (x1 - x0) * (1.0 - x2))",
                """
                def kernel(start, end, weight):
                    if not isinstance(weight, torch.Tensor):
                        weight = torch.full((), weight, dtype=torch.float32, device=start.device)
                    shape = torch.broadcast_shapes(start.shape, end.shape, weight.shape)
                    out = torch.empty(shape, dtype=start.dtype, device=start.device)
                    return _elementwise(out, [start, end, weight])
                """),
        ),
        aten_op(
            "bitwise_and",
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="torch.bitwise_and(a, b) = a & b on integer tensors (two's complement, "
                        "negative values included), with broadcasting; same integer dtype; "
                        "output a new tensor of that dtype. a may be non-contiguous.",
            reference=_torch2("bitwise_and"),
            make_inputs=_bitwise_inputs,
            cases=binary_cases(),
            dtypes=INTS,
            flops=binary_flops,
            bytes_moved=binary_bytes,
            tags=elementwise_tags,
            reference_kernel=elementwise_kernel("x0 & x1", BINARY_WRAPPER),
        ),
    ]
    specs += [_template_binary_spec(name, *row) for name, row in TEMPLATE_BINARY.items()]
    return specs
