"""Activations with parameters: softplus, elu, leaky_relu, prelu (a weight per channel),
rrelu_with_noise in eval mode, and clamp with scalar bounds.

Where ATen gives a parameter a default, some cases leave it out of the call, so a kernel must
carry ATen's default (leaky_relu's 0.01, softplus' threshold 20) rather than one of its own.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, numel


def _positional(params: Mapping[str, Any], names: Sequence[str],
                defaults: Mapping[str, Any]) -> list[Any]:
    """The scalar arguments a case passes: up to the last one it names, earlier ones it leaves
    out filled with ATen's defaults (so a case naming none calls with the tensor alone)."""
    given = [i for i, name in enumerate(names) if name in params]
    if not given:
        return []
    return [params.get(name, defaults[name]) for name in names[:given[-1] + 1]]


def _drawn(ctx: InputContext, scale: float) -> Any:
    """Normal values of the case's shape; with ``transposed``, a transposed (column-major)
    view, so a kernel must use strides or copy."""
    shape = tuple(ctx.params["shape"])
    if ctx.params.get("transposed"):
        return ctx.randn(*shape[::-1], scale=scale).t()
    return ctx.randn(*shape, scale=scale)


def _scalar_inputs(names: Sequence[str], defaults: Mapping[str, Any],
                   scale: float) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        return [_drawn(ctx, scale)] + _positional(ctx.params, names, defaults)

    return make


def _per_element(count: int) -> Callable[[Mapping[str, Any]], float]:
    return lambda p: count * numel(p["shape"])


def _read_write(p: Mapping[str, Any], size: int) -> float:
    return 2 * numel(p["shape"]) * size


SOFTPLUS_CASES = (
    ShapeCase("defaults", {"shape": (37, 129)}),
    ShapeCase("beta_threshold", {"shape": (3, 17, 61), "beta": 2.0, "threshold": 1.5}),
    ShapeCase("transposed_low_threshold", {"shape": (33, 64), "transposed": True, "beta": 0.5,
                                           "threshold": 0.75}),
    ShapeCase("beta_only", {"shape": (1000,), "beta": 3.0}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (2, 7, 11, 13), "beta": 1.5, "threshold": 2.0},
              heldout=True),
    ShapeCase("llm_hidden", {"shape": (4096, 4096)}, tier=LARGE),
    ShapeCase("llm_mlp_beta", {"shape": (16, 1024, 4096), "beta": 2.0, "threshold": 10.0},
              tier=LARGE),
)

ELU_CASES = (
    ShapeCase("defaults", {"shape": (37, 129)}),
    ShapeCase("alpha", {"shape": (3, 17, 61), "alpha": 0.5}),
    ShapeCase("selu_transposed", {"shape": (33, 64), "transposed": True,
                                  "alpha": 1.6732632423543772, "scale": 1.0507009873554805}),
    ShapeCase("input_scale", {"shape": (1000,), "alpha": 1.0, "scale": 1.0,
                              "input_scale": 2.0}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (2, 7, 11, 13), "alpha": 0.3}, heldout=True),
    ShapeCase("llm_hidden", {"shape": (4096, 4096)}, tier=LARGE),
    ShapeCase("vision_4d", {"shape": (16, 128, 64, 60), "alpha": 0.5}, tier=LARGE),
)

LEAKY_RELU_CASES = (
    ShapeCase("default_slope", {"shape": (37, 129)}),
    ShapeCase("slope", {"shape": (3, 17, 61), "negative_slope": 0.2}),
    ShapeCase("transposed_default", {"shape": (33, 64), "transposed": True}),
    ShapeCase("steep", {"shape": (1000,), "negative_slope": 0.5}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d_default", {"shape": (2, 7, 11, 13)}, heldout=True),
    ShapeCase("llm_hidden", {"shape": (4096, 4096)}, tier=LARGE),
    ShapeCase("vision_4d", {"shape": (16, 128, 64, 60), "negative_slope": 0.2}, tier=LARGE),
)

CLAMP_CASES = (
    ShapeCase("min_only", {"shape": (37, 129), "min": -0.5}),
    ShapeCase("max_only", {"shape": (3, 17, 61), "max": 0.75}),
    ShapeCase("both_transposed", {"shape": (33, 64), "transposed": True, "min": -1.0,
                                  "max": 1.5}),
    ShapeCase("relu6", {"shape": (1000,), "min": 0.0, "max": 6.0}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (2, 7, 11, 13), "min": -0.25, "max": 0.3}, heldout=True),
    ShapeCase("llm_hidden", {"shape": (4096, 4096), "min": -1.0, "max": 1.0}, tier=LARGE),
    ShapeCase("vision_4d_min", {"shape": (16, 128, 64, 60), "min": 0.0}, tier=LARGE),
)

# prelu: "shape" of x, "channels" the weight's size (x.size(1) or 1); "permuted" makes x a
# non-contiguous view (its dims reversed in memory).
PRELU_CASES = (
    ShapeCase("per_channel_3d", {"shape": (8, 13, 17), "channels": 13}),
    ShapeCase("per_channel_2d", {"shape": (5, 7), "channels": 7}),
    ShapeCase("shared_weight_4d", {"shape": (2, 3, 9, 11), "channels": 1}),
    ShapeCase("permuted_3d", {"shape": (6, 33, 20), "channels": 33, "permuted": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (3, 5, 7, 4), "channels": 5}, heldout=True),
    ShapeCase("resnet_stage", {"shape": (8, 64, 56, 56), "channels": 64}, tier=LARGE),
    ShapeCase("deep_stage", {"shape": (32, 256, 28, 28), "channels": 256}, tier=LARGE),
)

RRELU_CASES = (
    ShapeCase("defaults", {"shape": (37, 129)}),
    ShapeCase("bounds", {"shape": (3, 17, 61), "lower": 0.1, "upper": 0.3}),
    ShapeCase("transposed_defaults", {"shape": (33, 64), "transposed": True}),
    ShapeCase("explicit_eval", {"shape": (1000,), "lower": 0.2, "upper": 0.4,
                                "training": False}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (2, 7, 11, 13), "lower": 0.05, "upper": 0.25},
              heldout=True),
    ShapeCase("llm_hidden", {"shape": (4096, 4096)}, tier=LARGE),
    ShapeCase("vision_4d", {"shape": (16, 128, 64, 60), "lower": 0.1, "upper": 0.3},
              tier=LARGE),
)


def _prelu_inputs(ctx: InputContext) -> list[Any]:
    shape = tuple(ctx.params["shape"])
    if ctx.params.get("permuted"):
        x = ctx.randn(*shape[::-1], scale=2.0).permute(*range(len(shape) - 1, -1, -1))
    else:
        x = ctx.randn(*shape, scale=2.0)
    weight = ctx.uniform(ctx.params["channels"], low=0.05, high=0.5)
    return [x, weight]


def _rrelu_inputs(ctx: InputContext) -> list[Any]:
    x = _drawn(ctx, 2.0)
    # The noise buffer a training step would fill; in eval mode it is neither read nor written.
    noise = ctx.uniform(*x.shape, low=0.0, high=1.0)
    defaults = {"lower": 0.125, "upper": 1.0 / 3.0, "training": False}
    return [x, noise] + _positional(ctx.params, ("lower", "upper", "training"), defaults)


def _clamp_inputs(ctx: InputContext) -> list[Any]:
    x = _drawn(ctx, 2.0)
    if "max" not in ctx.params:
        return [x, ctx.params["min"]]
    return [x, ctx.params.get("min"), ctx.params["max"]]


def _softplus(x, *args):  # noqa: ANN001, ANN002, ANN202
    import torch.nn.functional as F

    return F.softplus(x, *args)


def _elu(x, *args):  # noqa: ANN001, ANN002, ANN202
    import torch

    return torch.ops.aten.elu(x, *args)


def _leaky_relu(x, *args):  # noqa: ANN001, ANN002, ANN202
    import torch.nn.functional as F

    return F.leaky_relu(x, *args)


def _prelu(x, weight):  # noqa: ANN001, ANN202
    import torch

    return torch.prelu(x, weight)


def _rrelu_with_noise(x, noise, *args):  # noqa: ANN001, ANN002, ANN202
    import torch

    return torch.ops.aten.rrelu_with_noise(x, noise, *args)


def _clamp(x, *bounds):  # noqa: ANN001, ANN002, ANN202
    import torch

    return torch.clamp(x, *bounds)


_TENSOR_NOTE = (" The output has x's shape and dtype (float32, float16 or bfloat16); x may be "
                "non-contiguous; compute in float32.")


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "softplus",
            signature="kernel(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor",
            description="F.softplus(x, beta=1, threshold=20): x where beta*x > threshold, else "
                        "log(1 + exp(beta*x)) / beta. Some calls pass only x, or x and beta."
                        + _TENSOR_NOTE,
            reference=_softplus,
            make_inputs=_scalar_inputs(("beta", "threshold"), {"beta": 1.0, "threshold": 20.0},
                                       scale=4.0),
            cases=SOFTPLUS_CASES, flops=_per_element(6), bytes_moved=_read_write,
            tags=("pointwise", "elementwise", "activation"),
        ),
        aten_op(
            "elu",
            signature="kernel(x: Tensor, alpha: float = 1.0, scale: float = 1.0, "
                      "input_scale: float = 1.0) -> Tensor",
            description="aten.elu(x, alpha=1, scale=1, input_scale=1): x*scale for x > 0, else "
                        "(exp(x*input_scale) - 1) * alpha * scale (F.elu is scale = "
                        "input_scale = 1; selu is alpha = 1.6733, scale = 1.0507). Some calls "
                        "pass only x." + _TENSOR_NOTE,
            reference=_elu,
            make_inputs=_scalar_inputs(("alpha", "scale", "input_scale"),
                                       {"alpha": 1.0, "scale": 1.0, "input_scale": 1.0},
                                       scale=2.0),
            cases=ELU_CASES, flops=_per_element(4), bytes_moved=_read_write,
            tags=("pointwise", "elementwise", "activation"),
        ),
        aten_op(
            "leaky_relu",
            signature="kernel(x: Tensor, negative_slope: float = 0.01) -> Tensor",
            description="F.leaky_relu(x, negative_slope=0.01): x for x > 0, else "
                        "x * negative_slope. Some calls pass only x." + _TENSOR_NOTE,
            reference=_leaky_relu,
            make_inputs=_scalar_inputs(("negative_slope",), {"negative_slope": 0.01},
                                       scale=2.0),
            cases=LEAKY_RELU_CASES, flops=_per_element(2), bytes_moved=_read_write,
            tags=("pointwise", "elementwise", "activation"),
        ),
        aten_op(
            "prelu",
            signature="kernel(x: Tensor, weight: Tensor) -> Tensor",
            description="torch.prelu(x, weight): x for x > 0, else weight[c] * x, where c is "
                        "x's index along dim 1 (the channel dim) and weight is 1-D with "
                        "x.size(1) entries, or a single entry shared by every channel. x has "
                        "2 to 4 dims and may be non-contiguous; weight has x's dtype. The "
                        "output has x's shape and dtype; compute in float32.",
            reference=_prelu,
            make_inputs=_prelu_inputs,
            cases=PRELU_CASES, flops=_per_element(2),
            bytes_moved=lambda p, size: (2 * numel(p["shape"]) + p["channels"]) * size,
            tags=("pointwise", "elementwise", "activation", "broadcast"),
        ),
        aten_op(
            "rrelu_with_noise",
            signature="kernel(x: Tensor, noise: Tensor, lower: float = 0.125, "
                      "upper: float = 1/3, training: bool = False, generator=None) -> Tensor",
            description="aten.rrelu_with_noise in eval mode (training=False, every case): "
                        "leaky_relu with the fixed slope (lower + upper) / 2, i.e. x for "
                        "x > 0, else x * (lower + upper) / 2. noise (x's shape) is the buffer a "
                        "training step fills with the random slopes; in eval mode it is "
                        "neither read nor written. Some calls pass only x and noise."
                        + _TENSOR_NOTE,
            reference=_rrelu_with_noise,
            make_inputs=_rrelu_inputs,
            cases=RRELU_CASES, flops=_per_element(2),
            bytes_moved=_read_write,  # noise is not read in eval mode
            tags=("pointwise", "elementwise", "activation"),
        ),
        aten_op(
            "clamp",
            signature="kernel(x: Tensor, min: float | None = None, "
                      "max: float | None = None) -> Tensor",
            description="torch.clamp(x, min=None, max=None) with scalar bounds, at least one "
                        "given: min(max(x, min), max), a missing bound not applied; NaN stays "
                        "NaN. Calls pass (x, min), (x, None, max) or (x, min, max)."
                        + _TENSOR_NOTE,
            reference=_clamp,
            make_inputs=_clamp_inputs,
            cases=CLAMP_CASES, flops=_per_element(2), bytes_moved=_read_write,
            tags=("pointwise", "elementwise", "activation"),
        ),
    ]
