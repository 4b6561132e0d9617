"""Normalization ATen operators over the last dim: layer_norm and rms_norm, computed in fp32."""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, numel

# Small cases: 2-D and 3-D x, row lengths no block divides (one longer than the interpreter's
# 1024-wide blocks), several eps, and inputs of scale 0.01 whose variance (1e-4) is close
# enough to eps that a kernel putting eps outside the sqrt is caught.
NORM_CASES = (
    ShapeCase("odd_2d", {"shape": (37, 129), "eps": 1e-5}),
    ShapeCase("odd_3d", {"shape": (4, 9, 1000), "eps": 1e-6}),
    ShapeCase("small_scale", {"shape": (24, 257), "eps": 1e-5, "scale": 0.01}),
    ShapeCase("long_row", {"shape": (3, 2053), "eps": 1e-6}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_4d", {"shape": (2, 3, 5, 181), "eps": 1e-4}, heldout=True),
    ShapeCase("llm_tokens", {"shape": (16384, 4096), "eps": 1e-5}, tier=LARGE),
    ShapeCase("llm_wide", {"shape": (4096, 8192), "eps": 1e-6}, tier=LARGE),
)


def _row_length(p: Mapping[str, Any]) -> int:
    """The normalized length N (the last dim), the number of terms in each mean."""
    return tuple(p["shape"])[-1]


def _x_and_weight(ctx: InputContext) -> list[Any]:
    n = _row_length(ctx.params)
    x = ctx.randn(*ctx.params["shape"], scale=ctx.params.get("scale", 1.0))
    # Weights near 1, as trained norms have, but spread enough that ignoring one shows.
    return [x, ctx.randn(n, scale=0.5, shift=1.0)]


def _layer_norm_inputs(ctx: InputContext) -> list[Any]:
    x, weight = _x_and_weight(ctx)
    return [x, weight, ctx.randn(_row_length(ctx.params)), float(ctx.params["eps"])]


def _rms_norm_inputs(ctx: InputContext) -> list[Any]:
    return [*_x_and_weight(ctx), float(ctx.params["eps"])]


def _layer_norm_reference(x, weight, bias, eps):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def _rms_norm_reference(x, weight, eps):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.rms_norm(x, (x.shape[-1],), weight, eps)


def operators() -> list[OperatorSpec]:
    # Normalized outputs have unit scale whatever N is, so atol is not scaled by N: with the
    # published 1e-4 x N, an unbiased-variance kernel would pass every case with N >= 257.
    return [
        aten_op(
            "layer_norm",
            signature="kernel(x: Tensor, weight: Tensor, bias: Tensor, eps: float) -> Tensor",
            description="F.layer_norm(x, (N,), weight, bias, eps) over the last dim N: "
                        "(x - mean) / sqrt(var + eps) * weight + bias per row, where var is the "
                        "biased variance (divided by N) and weight, bias have shape (N,). x, "
                        "weight and bias share one dtype (float32, float16 or bfloat16), which "
                        "the output has; compute in float32.",
            reference=_layer_norm_reference,
            make_inputs=_layer_norm_inputs,
            cases=NORM_CASES,
            # sum, subtract, square, sum, subtract, scale, weight, bias per element.
            flops=lambda p: 8 * numel(p["shape"]),
            bytes_moved=lambda p, size: (2 * numel(p["shape"]) + 2 * _row_length(p)) * size,
            tags=("reduction", "normalization"),
        ),
        aten_op(
            "rms_norm",
            signature="kernel(x: Tensor, weight: Tensor, eps: float) -> Tensor",
            description="F.rms_norm(x, (N,), weight, eps) over the last dim N: "
                        "x / sqrt(mean(x**2) + eps) * weight per row, weight of shape (N,). "
                        "x and weight share one dtype (float32, float16 or bfloat16), which the "
                        "output has; compute everything, the weight product included, in "
                        "float32 and round once to that dtype, as torch's fused rms_norm does.",
            reference=_rms_norm_reference,
            make_inputs=_rms_norm_inputs,
            cases=NORM_CASES,
            # square, sum, scale, weight per element.
            flops=lambda p: 4 * numel(p["shape"]),
            bytes_moved=lambda p, size: (2 * numel(p["shape"]) + _row_length(p)) * size,
            tags=("reduction", "normalization"),
        ),
    ]
