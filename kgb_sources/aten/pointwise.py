"""Pointwise ATen operators: unary math, activations, binary arithmetic with broadcasting, pow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, from_template, numel

UNARY_CASES = (
    ShapeCase("scalar", {"shape": ()}),
    ShapeCase("odd_2d", {"shape": (37, 129)}),
    ShapeCase("transposed", {"shape": (33, 64), "transposed": True}),
    ShapeCase("prime_3d", {"shape": (3, 17, 61)}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (2, 7, 11, 13)}, heldout=True),
    ShapeCase("llm_hidden", {"shape": (4096, 4096)}, tier=LARGE),
    ShapeCase("vision_4d", {"shape": (16, 128, 64, 60)}, tier=LARGE),
)


@dataclass(frozen=True)
class Unary:
    name: str
    # Triton expression of the fp32 value `x`; None: the op has its own kernel file,
    # kernels/<name>.py, instead of the unary template.
    expression: str | None
    reference: Callable[[Any], Any]
    description: str
    flops_per_element: int = 1
    low: float | None = None  # inputs drawn uniformly in [low, high) when set, else normal
    high: float | None = None
    tags: tuple[str, ...] = ("elementwise",)
    # Inputs from draw(ctx, shape) when set (zeros mixed in, signed magnitudes), else as above.
    draw: Callable[[InputContext, tuple[int, ...]], Any] | None = None
    baseline: Callable[[Any], Any] | None = None  # timed instead of reference when set


def _torch(name: str) -> Callable[[Any], Any]:
    def call(x):  # noqa: ANN001, ANN202
        import torch

        return getattr(torch, name)(x)

    call.__name__ = f"torch_{name}"
    return call


def _functional(name: str) -> Callable[[Any], Any]:
    def call(x):  # noqa: ANN001, ANN202
        import torch.nn.functional as F

        return getattr(F, name)(x)

    call.__name__ = f"F_{name}"
    return call


def _gelu_tanh(x):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.gelu(x, approximate="tanh")


def _special_entr(x):  # noqa: ANN001, ANN202
    import torch

    return torch.special.entr(x)


def _logit(x):  # noqa: ANN001, ANN202
    """torch.logit, computed in fp32 for fp16/bf16 as the CUDA kernel does: the CPU kernel
    works in half precision, with relative errors up to 45% near x = 1/2 (logit near 0),
    which a right fp32-computing kernel could not match. The native call stays the timing
    baseline."""
    import torch

    if x.dtype in (torch.float16, torch.bfloat16):
        return torch.logit(x.float()).to(x.dtype)
    return torch.logit(x)


def _with_zeros(ctx: InputContext, shape: tuple[int, ...]) -> Any:
    """Normal values (std 2) with about one in six set to exactly 0: sign's third branch."""
    x = ctx.randn(*shape, scale=2.0)
    return x.masked_fill(ctx.randint(*shape, low=0, high=6) == 0, 0.0)


def _entr_inputs(ctx: InputContext, shape: tuple[int, ...]) -> Any:
    """Mostly positive values, some exact zeros (entr(0) = 0) and some negatives (-inf)."""
    x = ctx.uniform(*shape, low=-0.5, high=3.0)
    return x.masked_fill(ctx.randint(*shape, low=0, high=8) == 0, 0.0)


def _signed_away_from_zero(ctx: InputContext, shape: tuple[int, ...]) -> Any:
    magnitude = ctx.uniform(*shape, low=0.1, high=4.0)
    sign = ctx.randint(*shape, low=0, high=2).to(magnitude.dtype) * 2 - 1
    return magnitude * sign


# log(1 + u) accurate for small u (Goldberg's trick), written out where softplus is needed:
# tl has no log1p, and log(1 + exp(x)) alone loses every digit of softplus(x) below x = -17.
_SOFTPLUS = ("tl.where(x > 20.0, x, tl.where(1.0 + tl.exp(x) == 1.0, tl.exp(x), "
             "tl.log(1.0 + tl.exp(x)) * tl.exp(x) / ((1.0 + tl.exp(x)) - 1.0)))")


UNARY = (
    Unary("neg", "-x", _torch("neg"), "Elementwise negation, -x."),
    Unary("exp", "tl.exp(x)", _torch("exp"), "Elementwise exponential, e**x."),
    Unary("sin", "tl.sin(x)", _torch("sin"), "Elementwise sine (radians)."),
    Unary("cos", "tl.cos(x)", _torch("cos"), "Elementwise cosine (radians)."),
    Unary("rsqrt", "1.0 / tl.sqrt(x)", _torch("rsqrt"),
          "Elementwise reciprocal square root, 1/sqrt(x); inputs are positive.",
          flops_per_element=2, low=0.05, high=4.0),
    Unary("abs", "tl.abs(x)", _torch("abs"), "Elementwise absolute value."),
    Unary("relu", "tl.where(x > 0, x, 0.0)", _torch("relu"), "max(x, 0) elementwise.",
          tags=("elementwise", "activation")),
    Unary("gelu", "0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))", _functional("gelu"),
          "GELU with the exact erf form (approximate='none'): 0.5*x*(1+erf(x/sqrt(2))).",
          flops_per_element=8, tags=("elementwise", "activation")),
    Unary("silu", "x * tl.sigmoid(x)", _functional("silu"), "SiLU / swish: x * sigmoid(x).",
          flops_per_element=5, tags=("elementwise", "activation")),
    Unary("sigmoid", "tl.sigmoid(x)", _torch("sigmoid"), "Logistic sigmoid 1/(1+exp(-x)).",
          flops_per_element=4, tags=("elementwise", "activation")),
    # tl.math.tanh is missing from Triton 3.9's interpreter; tanh(x) = 2*sigmoid(2x) - 1.
    Unary("tanh", "2.0 * tl.sigmoid(2.0 * x) - 1.0", _torch("tanh"), "Hyperbolic tangent.",
          flops_per_element=5, tags=("elementwise", "activation")),
    # -- more math, the published list's and a few common ones ---------------------------------
    Unary("acosh", "tl.log(x + tl.sqrt((x - 1.0) * (x + 1.0)))", _torch("acosh"),
          "Elementwise inverse hyperbolic cosine, log(x + sqrt(x*x - 1)); inputs are >= 1 "
          "(the cases draw x from [1, 6)).", flops_per_element=6, low=1.0, high=6.0),
    # Triton has no asin: kernels/asin.py is Cephes' asinf polynomial (error ~ 2.5e-7).
    Unary("asin", None, _torch("asin"),
          "Elementwise inverse sine in radians; inputs lie in (-1, 1).", flops_per_element=12,
          low=-0.999, high=0.999),
    Unary("cosh", "0.5 * (tl.exp(x) + tl.exp(-x))", _torch("cosh"),
          "Elementwise hyperbolic cosine, (e**x + e**-x) / 2.", flops_per_element=5),
    Unary("erfc", "1.0 - tl.math.erf(x)", _torch("erfc"),
          "Elementwise complementary error function, 1 - erf(x).", flops_per_element=10),
    Unary("erf", "tl.math.erf(x)", _torch("erf"), "Elementwise error function erf(x).",
          flops_per_element=10),
    Unary("floor", "tl.floor(x)", _torch("floor"),
          "Elementwise floor (round towards -inf) of a floating tensor.", low=-20.0, high=20.0),
    Unary("log", "tl.log(x)", _torch("log"),
          "Elementwise natural logarithm; inputs are positive (the cases draw x from [0.01, 10)).",
          low=0.01, high=10.0),
    Unary("log10", "tl.log(x) * 0.4342944819032518", _torch("log10"),
          "Elementwise base-10 logarithm; inputs are positive (the cases draw x from "
          "[0.01, 100)).", flops_per_element=2, low=0.01, high=100.0),
    Unary("exp2", "tl.exp2(x)", _torch("exp2"), "Elementwise 2**x.", flops_per_element=1),
    Unary("sqrt", "tl.sqrt(x)", _torch("sqrt"),
          "Elementwise square root; inputs are non-negative (the cases draw x from [0, 10)).",
          low=0.0, high=10.0),
    Unary("reciprocal", "1.0 / x", _torch("reciprocal"),
          "Elementwise 1/x of a floating tensor; inputs are kept away from zero.",
          draw=_signed_away_from_zero),
    Unary("square", "x * x", _torch("square"), "Elementwise x*x (torch.square) of a floating "
          "tensor."),
    Unary("sgn", "tl.where(x > 0, 1.0, tl.where(x < 0, -1.0, x))", _torch("sgn"),
          "torch.sgn on a real tensor: the sign, -1, 0 or +1 (0 for +-0, NaN stays NaN); the "
          "inputs hold exact zeros.", draw=_with_zeros),
    Unary("special_entr",
          "tl.where(x > 0, -x * tl.log(x), tl.where(x == 0, 0.0, tl.where(x < 0, "
          "-float('inf'), x)))", _special_entr,
          "torch.special.entr: -x*ln(x) for x > 0, 0 at x == 0, -inf for x < 0 (NaN stays "
          "NaN); the inputs hold exact zeros and negatives.", flops_per_element=3,
          draw=_entr_inputs),
    Unary("logit", "tl.log(x / (1.0 - x))", _logit,
          "torch.logit(x) with eps=None (no clamping): log(x / (1 - x)); inputs lie in (0, 1) "
          "(the cases draw x from [0.02, 0.98)).", flops_per_element=3, low=0.02, high=0.98,
          baseline=_torch("logit")),
    # -- activations without parameters -------------------------------------------------------
    Unary("hardsigmoid", "tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) / 6.0",
          _functional("hardsigmoid"),
          "Hardsigmoid: min(max(x + 3, 0), 6) / 6, i.e. 0 below -3, 1 above 3, x/6 + 1/2 "
          "between.", flops_per_element=4, low=-6.0, high=6.0,
          tags=("elementwise", "activation")),
    Unary("hardswish", "x * tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) / 6.0",
          _functional("hardswish"),
          "Hardswish: x * min(max(x + 3, 0), 6) / 6.", flops_per_element=5, low=-6.0, high=6.0,
          tags=("elementwise", "activation")),
    Unary("mish", f"x * (2.0 * tl.sigmoid(2.0 * {_SOFTPLUS}) - 1.0)", _functional("mish"),
          "Mish: x * tanh(softplus(x)) with softplus(x) = log(1 + exp(x)).",
          flops_per_element=10, tags=("elementwise", "activation")),
    # 0.5 * x * (1 + tanh(u)) == x * sigmoid(2u), u = sqrt(2/pi) * (x + 0.044715 x^3).
    Unary("gelu_tanh", "x * tl.sigmoid(1.5957691216057308 * (x + 0.044715 * x * x * x))",
          _gelu_tanh,
          "GELU with the tanh approximation, F.gelu(x, approximate='tanh'): "
          "0.5*x*(1 + tanh(sqrt(2/pi) * (x + 0.044715*x**3))).", flops_per_element=9,
          tags=("elementwise", "activation")),
)


def _unary_inputs(op: Unary) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        shape = tuple(ctx.params["shape"])
        if ctx.params.get("transposed"):
            shape = shape[::-1]
        if op.draw is not None:
            x = op.draw(ctx, shape)
        elif op.low is not None:
            x = ctx.uniform(*shape, low=op.low, high=op.high)
        else:
            x = ctx.randn(*shape, scale=2.0)
        return [x.t() if ctx.params.get("transposed") else x]

    return make


def _unary_spec(op: Unary) -> OperatorSpec:
    return aten_op(
        op.name,
        signature="kernel(x: Tensor) -> Tensor",
        description=op.description + " Output has x's shape and dtype; x may be non-contiguous.",
        reference=op.reference,
        make_inputs=_unary_inputs(op),
        cases=UNARY_CASES,
        flops=lambda p, k=op.flops_per_element: k * numel(p["shape"]),
        bytes_moved=lambda p, size: 2 * numel(p["shape"]) * size,
        tags=("pointwise",) + op.tags,
        reference_kernel=(None if op.expression is None
                          else from_template("unary", expr=op.expression)),
        baseline=op.baseline,
    )


BINARY_CASES = (
    ShapeCase("same_shape", {"a": (37, 129), "b": (37, 129)}),
    ShapeCase("row_broadcast", {"a": (33, 65), "b": (65,)}),
    ShapeCase("outer_broadcast", {"a": (17, 1), "b": (1, 40)}),
    ShapeCase("transposed", {"a": (40, 24), "b": (40, 24), "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d_two_way_broadcast", {"a": (7, 1, 11, 13), "b": (3, 1, 13)},
              heldout=True),
    ShapeCase("llm_residual", {"a": (8192, 4096), "b": (8192, 4096)}, tier=LARGE),
    ShapeCase("bias_broadcast", {"a": (16, 1024, 4096), "b": (4096,)}, tier=LARGE),
)

# name, Triton expression of a and b, torch function, description
BINARY = (
    ("add", "a + b", "add", "a + b with broadcasting (alpha=1)."),
    ("sub", "a - b", "sub", "a - b with broadcasting (alpha=1)."),
    ("mul", "a * b", "mul", "a * b with broadcasting."),
    ("div", "a / b", "div", "True division a / b with broadcasting (rounding_mode=None); "
                            "b is kept away from zero."),
)


def _broadcast_shape(p: Mapping[str, Any]) -> tuple[int, ...]:
    a, b = tuple(p["a"]), tuple(p["b"])
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + a
    b = (1,) * (rank - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b))


def _binary_inputs(keep_b_from_zero: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        transposed = ctx.params.get("transposed")
        a_shape, b_shape = tuple(ctx.params["a"]), tuple(ctx.params["b"])
        a = ctx.randn(*(a_shape[::-1] if transposed else a_shape))
        if keep_b_from_zero:
            magnitude = ctx.uniform(*b_shape, low=0.5, high=2.0)
            sign = ctx.randint(*b_shape, low=0, high=2).to(magnitude.dtype) * 2 - 1
            b = magnitude * sign
        else:
            b = ctx.randn(*b_shape)
        return [a.t() if transposed else a, b]

    return make


def _binary_spec(name: str, expression: str, torch_name: str, description: str) -> OperatorSpec:
    def reference(a, b):  # noqa: ANN001, ANN202
        import torch

        return getattr(torch, torch_name)(a, b)

    return aten_op(
        name,
        signature="kernel(a: Tensor, b: Tensor) -> Tensor",
        description=description + " a and b have the same dtype; either may be non-contiguous.",
        reference=reference,
        make_inputs=_binary_inputs(keep_b_from_zero=name == "div"),
        cases=BINARY_CASES,
        flops=lambda p: numel(_broadcast_shape(p)),
        bytes_moved=lambda p, size: (numel(p["a"]) + numel(p["b"])
                                     + numel(_broadcast_shape(p))) * size,
        tags=("pointwise", "elementwise", "binary", "broadcast"),
        reference_kernel=from_template("binary", expr=expression),
    )


POW_CASES = (
    ShapeCase("odd_square", {"shape": (37, 129), "exponent": 2.0}),
    ShapeCase("fractional", {"shape": (1000,), "exponent": 0.5}),
    ShapeCase("negative", {"shape": (5, 7, 11), "exponent": -1.5}),
    ShapeCase("transposed", {"shape": (40, 24), "exponent": 3.0, "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (2, 3, 13, 19), "exponent": 2.5}, heldout=True),
    ShapeCase("llm_hidden", {"shape": (4096, 4096), "exponent": 3.0}, tier=LARGE),
)


def _pow_inputs(ctx: InputContext) -> list[Any]:
    shape = tuple(ctx.params["shape"])
    if ctx.params.get("transposed"):  # the transposed view of a tensor stored the other way
        stored = ctx.uniform(*shape[:-2], shape[-1], shape[-2], low=0.25, high=2.0)
        return [stored.mT, float(ctx.params["exponent"])]
    return [ctx.uniform(*shape, low=0.25, high=2.0), float(ctx.params["exponent"])]


def _pow_reference(x, exponent):  # noqa: ANN001, ANN202
    import torch

    return torch.pow(x, exponent)


def operators() -> list[OperatorSpec]:
    specs = [_unary_spec(op) for op in UNARY]
    specs += [_binary_spec(*row) for row in BINARY]
    specs.append(aten_op(
        "pow",
        signature="kernel(x: Tensor, exponent: float) -> Tensor",
        description="pow.Tensor_Scalar: x ** exponent elementwise, for positive x "
                    "(the cases draw x from [0.25, 2)).",
        reference=_pow_reference,
        make_inputs=_pow_inputs,
        cases=POW_CASES,
        flops=lambda p: 3 * numel(p["shape"]),
        bytes_moved=lambda p, size: 2 * numel(p["shape"]) * size,
        tags=("pointwise", "elementwise"),
    ))
    return specs

