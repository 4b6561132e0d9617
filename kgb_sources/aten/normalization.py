"""Normalization ATen operators, computed in fp32: layer_norm and rms_norm over the last dim,
group_norm over groups of channels, and batch_norm in inference mode (running statistics)."""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, in_fp32, numel

# Small cases: 2-D and 3-D x, row lengths no block divides (one longer than the interpreter's
# 1024-wide blocks), several eps, and inputs of scale 0.01 whose variance (1e-4) is close
# enough to eps that a kernel putting eps outside the sqrt is caught.
NORM_CASES = (
    ShapeCase("odd_2d", {"shape": (37, 129), "eps": 1e-5}),
    ShapeCase("odd_3d", {"shape": (4, 9, 1000), "eps": 1e-6}),
    ShapeCase("small_scale", {"shape": (24, 257), "eps": 1e-5, "scale": 0.01}),
    ShapeCase("long_row", {"shape": (3, 2053), "eps": 1e-6}),
    # x the transposed view of a tensor stored (N, rows): its rows are strided.
    ShapeCase("transposed_x", {"shape": (40, 96), "eps": 1e-5, "transposed": True}),
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
    shape, scale = tuple(ctx.params["shape"]), ctx.params.get("scale", 1.0)
    if ctx.params.get("transposed"):
        x = ctx.randn(*shape[:-2], shape[-1], shape[-2], scale=scale).mT
    else:
        x = ctx.randn(*shape, scale=scale)
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


# (N, C, *spatial) inputs: channel counts and groups that are not powers of two, spatial sizes
# no block divides, a group longer than one 1024-element block.
GROUP_NORM_CASES = (
    ShapeCase("image_4d", {"shape": (2, 12, 7, 9), "groups": 4, "eps": 1e-5}),
    ShapeCase("sequence_3d", {"shape": (3, 30, 37), "groups": 6, "eps": 1e-6}),
    ShapeCase("one_group_long", {"shape": (2, 5, 11, 23), "groups": 1, "eps": 1e-5}),
    ShapeCase("group_per_channel_small_scale", {"shape": (4, 8, 33), "groups": 8, "eps": 1e-5,
                                                "scale": 0.01}),
    # x in channels-last memory, as convolutions leave it: the channels are innermost.
    ShapeCase("channels_last", {"shape": (2, 12, 5, 7), "groups": 3, "eps": 1e-5,
                                "channels_last": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_image", {"shape": (3, 10, 5, 7), "groups": 5, "eps": 1e-4},
              heldout=True),
    ShapeCase("sd_unet_block", {"shape": (8, 320, 64, 64), "groups": 32, "eps": 1e-5},
              tier=LARGE),
    ShapeCase("sd_unet_deep", {"shape": (8, 1280, 16, 16), "groups": 32, "eps": 1e-5},
              tier=LARGE),
)
BATCH_NORM_CASES = (
    ShapeCase("image_4d", {"shape": (2, 12, 7, 9), "eps": 1e-5}),
    ShapeCase("sequence_3d", {"shape": (3, 30, 37), "eps": 1e-3}),
    ShapeCase("features_2d", {"shape": (37, 129), "eps": 1e-5}),
    ShapeCase("tiny_variance", {"shape": (4, 8, 33), "eps": 1e-5, "var_low": 1e-5}),
    # x in channels-last memory, as convolutions leave it: the channels are innermost.
    ShapeCase("channels_last", {"shape": (2, 12, 5, 7), "eps": 1e-5, "channels_last": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_image", {"shape": (3, 10, 5, 7), "eps": 1e-4}, heldout=True),
    ShapeCase("resnet_stage", {"shape": (64, 256, 56, 56), "eps": 1e-5}, tier=LARGE),
    ShapeCase("resnet_deep", {"shape": (64, 2048, 7, 7), "eps": 1e-5}, tier=LARGE),
)


def _channels(p: Mapping[str, Any]) -> int:
    return tuple(p["shape"])[1]


def _memory_format(ctx: InputContext, x: Any) -> Any:
    """x as the case lays it out: channels-last (same values, channels innermost) when asked."""
    if ctx.params.get("channels_last"):
        return x.contiguous(memory_format=ctx.torch.channels_last)
    return x


def _group_norm_inputs(ctx: InputContext) -> list[Any]:
    channels = _channels(ctx.params)
    x = ctx.randn(*ctx.params["shape"], scale=ctx.params.get("scale", 1.0), shift=0.5)
    return [_memory_format(ctx, x), ctx.params["groups"],
            ctx.randn(channels, scale=0.5, shift=1.0), ctx.randn(channels),
            float(ctx.params["eps"])]


def _batch_norm_inputs(ctx: InputContext) -> list[Any]:
    channels = _channels(ctx.params)
    low = ctx.params.get("var_low", 0.5)
    return [_memory_format(ctx, ctx.randn(*ctx.params["shape"])), ctx.randn(channels, scale=0.5),
            ctx.uniform(channels, low=low, high=max(2.0, 10 * low)),
            ctx.randn(channels, scale=0.5, shift=1.0), ctx.randn(channels),
            float(ctx.params["eps"])]


# fp16/bf16 references: in_fp32, since torch's CPU reductions round intermediates to the
# storage dtype and the fp32 rule does not.


def _group_norm_native(x, num_groups, weight, bias, eps):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.group_norm(x, num_groups, weight, bias, eps)


def _batch_norm_native(x, running_mean, running_var, weight, bias, eps):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)


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
            tags=("norm", "normalization"),
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
            tags=("norm", "normalization"),
        ),
        aten_op(
            "group_norm",
            signature="kernel(x: Tensor, num_groups: int, weight: Tensor, bias: Tensor, "
                      "eps: float) -> Tensor",
            description="F.group_norm(x, num_groups, weight, bias, eps) for x of shape "
                        "(N, C, *): the C channels of each sample split into num_groups "
                        "consecutive groups; each group normalized by its own mean and biased "
                        "variance, (x - mean) / sqrt(var + eps), then channel c scaled by "
                        "weight[c] and shifted by bias[c]. One dtype for all tensors, which the "
                        "output has; compute in fp32 and round once.",
            reference=in_fp32(_group_norm_native),
            baseline=_group_norm_native,
            make_inputs=_group_norm_inputs,
            cases=GROUP_NORM_CASES,
            flops=lambda p: 8 * numel(p["shape"]),
            bytes_moved=lambda p, size: (3 * numel(p["shape"]) + 2 * _channels(p)) * size,
            tags=("norm", "normalization"),
        ),
        aten_op(
            "batch_norm",
            signature="kernel(x: Tensor, running_mean: Tensor, running_var: Tensor, "
                      "weight: Tensor, bias: Tensor, eps: float) -> Tensor",
            description="F.batch_norm(x, running_mean, running_var, weight, bias, "
                        "training=False, eps=eps): inference mode, x of shape (N, C, *), "
                        "(x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + "
                        "bias[c] for channel c; the running statistics are read, never "
                        "updated. One dtype for all tensors, which the output has; compute in "
                        "fp32 and round once.",
            reference=in_fp32(_batch_norm_native),
            baseline=_batch_norm_native,
            make_inputs=_batch_norm_inputs,
            cases=BATCH_NORM_CASES,
            flops=lambda p: 5 * numel(p["shape"]),
            bytes_moved=lambda p, size: (2 * numel(p["shape"]) + 4 * _channels(p)) * size,
            tags=("norm", "normalization"),
        ),
    ]
