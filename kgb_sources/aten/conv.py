"""Convolutions: conv1d, conv2d (groups=1), depthwise conv2d (groups == in_channels) and
im2col, the patch gather behind them.

Small cases use odd image sizes that no tile divides, strides, asymmetric paddings,
dilations, rectangular kernels, 1x1 kernels, and one channels-last input so that a kernel
assuming contiguous NCHW fails. Each conv output sums C_in * KH * KW products (KH * KW for a
depthwise one), which is ``reduce_dim``. On GPUs the backend turns cuDNN's TF32 off (see
kgb_backends/nvidia.py), so the fp32 references are exact products; fp16/bf16 references are
computed in fp32 and rounded once (in_fp32), the native call being the timing baseline.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, in_fp32, numel

# conv2d: "x" (N, C, H, W), "weight" (O, C, KH, KW); stride/padding/dilation as (h, w) pairs;
# "bias" whether a bias is passed; "channels_last" stores x NHWC (a permuted view).
CONV2D_CASES = (
    ShapeCase("3x3_pad1_bias", {"x": (2, 3, 11, 13), "weight": (5, 3, 3, 3), "stride": (1, 1),
                                "padding": (1, 1), "dilation": (1, 1), "bias": True}),
    ShapeCase("3x3_stride2_asym_pad", {"x": (1, 4, 15, 12), "weight": (6, 4, 3, 3),
                                       "stride": (2, 2), "padding": (1, 2), "dilation": (1, 1),
                                       "bias": True}),
    ShapeCase("1x1_no_bias", {"x": (2, 8, 7, 9), "weight": (12, 8, 1, 1), "stride": (1, 1),
                              "padding": (0, 0), "dilation": (1, 1), "bias": False}),
    ShapeCase("dilated_channels_last", {"x": (1, 3, 13, 11), "weight": (4, 3, 3, 3),
                                        "stride": (1, 1), "padding": (2, 2), "dilation": (2, 2),
                                        "bias": True, "channels_last": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_rect_kernel", {"x": (2, 5, 9, 10), "weight": (3, 5, 5, 3),
                                      "stride": (2, 1), "padding": (2, 1), "dilation": (1, 1),
                                      "bias": True}, heldout=True),
    ShapeCase("resnet_3x3", {"x": (32, 64, 56, 56), "weight": (64, 64, 3, 3), "stride": (1, 1),
                             "padding": (1, 1), "dilation": (1, 1), "bias": False}, tier=LARGE),
    ShapeCase("resnet_1x1_reduce", {"x": (32, 256, 56, 56), "weight": (64, 256, 1, 1),
                                    "stride": (1, 1), "padding": (0, 0), "dilation": (1, 1),
                                    "bias": False}, tier=LARGE),
)

# Depthwise: weight (C * multiplier, 1, KH, KW).
DEPTHWISE_CASES = (
    ShapeCase("3x3_pad1_bias", {"x": (2, 6, 11, 13), "weight": (6, 1, 3, 3), "stride": (1, 1),
                                "padding": (1, 1), "dilation": (1, 1), "bias": True}),
    ShapeCase("multiplier2_stride2", {"x": (1, 4, 10, 9), "weight": (8, 1, 3, 3),
                                      "stride": (2, 2), "padding": (1, 1), "dilation": (1, 1),
                                      "bias": True}),
    ShapeCase("5x5_dilated_no_bias", {"x": (1, 5, 14, 12), "weight": (5, 1, 5, 5),
                                      "stride": (1, 1), "padding": (4, 3), "dilation": (2, 2),
                                      "bias": False}),
    ShapeCase("channels_last", {"x": (2, 7, 9, 8), "weight": (7, 1, 3, 3), "stride": (1, 1),
                                "padding": (0, 1), "dilation": (1, 1), "bias": True,
                                "channels_last": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_rect_kernel", {"x": (2, 3, 9, 8), "weight": (3, 1, 3, 5),
                                      "stride": (1, 2), "padding": (1, 2), "dilation": (1, 1),
                                      "bias": True}, heldout=True),
    ShapeCase("mobilenet_3x3", {"x": (32, 144, 56, 56), "weight": (144, 1, 3, 3),
                                "stride": (1, 1), "padding": (1, 1), "dilation": (1, 1),
                                "bias": False}, tier=LARGE),
    ShapeCase("mobilenet_3x3_stride2", {"x": (32, 384, 28, 28), "weight": (384, 1, 3, 3),
                                        "stride": (2, 2), "padding": (1, 1), "dilation": (1, 1),
                                        "bias": True}, tier=LARGE),
)

# conv1d: "x" (N, C, L), "weight" (O, C, KL); stride/padding/dilation ints.
CONV1D_CASES = (
    ShapeCase("k3_pad1_bias", {"x": (2, 5, 37), "weight": (7, 5, 3), "stride": 1, "padding": 1,
                               "dilation": 1, "bias": True}),
    ShapeCase("k5_stride2_no_bias", {"x": (1, 6, 50), "weight": (4, 6, 5), "stride": 2,
                                     "padding": 2, "dilation": 1, "bias": False}),
    ShapeCase("dilated_no_pad", {"x": (2, 3, 41), "weight": (5, 3, 3), "stride": 1,
                                 "padding": 0, "dilation": 3, "bias": True}),
    ShapeCase("transposed_input", {"x": (3, 9, 23), "weight": (6, 9, 2), "stride": 1,
                                   "padding": 1, "dilation": 1, "bias": True,
                                   "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_strided_dilated", {"x": (3, 4, 29), "weight": (6, 4, 4), "stride": 3,
                                          "padding": 1, "dilation": 2, "bias": True},
              heldout=True),
    ShapeCase("audio_k3", {"x": (16, 512, 4096), "weight": (512, 512, 3), "stride": 1,
                           "padding": 1, "dilation": 1, "bias": True}, tier=LARGE),
)

# im2col: "x" (N, C, H, W) or (C, H, W); kernel_size, dilation, padding, stride pairs.
IM2COL_CASES = (
    ShapeCase("3x3_pad1", {"x": (2, 3, 9, 11), "kernel_size": (3, 3), "dilation": (1, 1),
                           "padding": (1, 1), "stride": (1, 1)}),
    ShapeCase("rect_stride2", {"x": (1, 4, 10, 9), "kernel_size": (2, 3), "dilation": (1, 1),
                               "padding": (0, 1), "stride": (2, 2)}),
    ShapeCase("dilated_channels_last", {"x": (1, 2, 12, 13), "kernel_size": (3, 3),
                                        "dilation": (2, 2), "padding": (2, 2), "stride": (1, 1),
                                        "channels_last": True}),
    ShapeCase("unbatched_3d", {"x": (3, 8, 7), "kernel_size": (2, 2), "dilation": (1, 1),
                               "padding": (0, 0), "stride": (2, 2)}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_mixed", {"x": (2, 3, 11, 8), "kernel_size": (4, 3), "dilation": (2, 1),
                                "padding": (1, 2), "stride": (3, 2)}, heldout=True),
    ShapeCase("resnet_3x3", {"x": (32, 64, 56, 56), "kernel_size": (3, 3), "dilation": (1, 1),
                             "padding": (1, 1), "stride": (1, 1)}, tier=LARGE),
)


def _out_len(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _pair(value: Any) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def _conv2d_out(p: Mapping[str, Any]) -> tuple[int, int, int, int]:
    n, _, h, w = p["x"]
    o, _, kh, kw = p["weight"]
    (sh, sw), (ph, pw), (dh, dw) = _pair(p["stride"]), _pair(p["padding"]), _pair(p["dilation"])
    return n, o, _out_len(h, kh, sh, ph, dh), _out_len(w, kw, sw, pw, dw)


def _conv1d_out(p: Mapping[str, Any]) -> tuple[int, int, int]:
    n, _, length = p["x"]
    o, _, kl = p["weight"]
    return n, o, _out_len(length, kl, p["stride"], p["padding"], p["dilation"])


def _image(ctx: InputContext, shape: tuple[int, ...], channels_last: bool) -> Any:
    """An NCHW tensor; channels_last stores it NHWC (a permuted view, not contiguous)."""
    if channels_last:
        n, c, h, w = shape
        return ctx.randn(n, h, w, c).permute(0, 3, 1, 2)
    return ctx.randn(*shape)


def _conv_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    if p.get("transposed"):  # conv1d: x stored (N, L, C)
        n, c, length = p["x"]
        x = ctx.randn(n, length, c).transpose(1, 2)
    else:
        x = _image(ctx, tuple(p["x"]), bool(p.get("channels_last")))
    # Weights scaled by 1/sqrt(fan-in), as initialised layers are, so outputs stay of unit size.
    fan_in = numel(p["weight"][1:])
    weight = ctx.randn(*p["weight"], scale=fan_in ** -0.5)
    bias = ctx.randn(p["weight"][0]) if p["bias"] else None
    return [x, weight, bias, p["stride"], p["padding"], p["dilation"]]


# fp16/bf16 references: in_fp32, the rule every kernel here is held to. The native
# half-precision convolution on a GPU is coarser: ATen's cuDNN path (Convolution.cpp,
# ConvBackend::Cudnn) rounds the conv output to the dtype and then adds the bias in a second
# op, so where the bias cancels the sum the result carries up to half an ulp of the sum's
# magnitude. On an H200 (torch 2.11, TF32 off) a correct fp32-accumulating kernel failed
# against bf16 F.conv1d (k3_pad1_bias: got -0.0287, expected -0.03125), F.conv2d
# (3x3_pad1_bias: 0.0039 for 0.0078) and the depthwise conv (channels_last: 0.1177 for
# 0.1211). fp16 takes the same paths, 8x finer, and passed there; the rule is one for both.
# The native call is the timing baseline.


def _conv2d_native(x, weight, bias, stride, padding, dilation):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.conv2d(x, weight, bias, stride, padding, dilation, 1)


def _depthwise_native(x, weight, bias, stride, padding, dilation):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.conv2d(x, weight, bias, stride, padding, dilation, x.shape[1])


def _conv1d_native(x, weight, bias, stride, padding, dilation):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.conv1d(x, weight, bias, stride, padding, dilation, 1)


def _conv_flops(out_elements: int, p: Mapping[str, Any]) -> float:
    return 2.0 * out_elements * numel(p["weight"][1:]) + (out_elements if p["bias"] else 0)


def _conv_bytes(out_elements: int, p: Mapping[str, Any], size: int) -> float:
    return (numel(p["x"]) + numel(p["weight"]) + out_elements
            + (p["weight"][0] if p["bias"] else 0)) * size


def _im2col_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    x = _image(ctx, tuple(p["x"]), bool(p.get("channels_last")))
    return [x, list(p["kernel_size"]), list(p["dilation"]), list(p["padding"]),
            list(p["stride"])]


def _im2col_reference(x, kernel_size, dilation, padding, stride):  # noqa: ANN001, ANN202
    import torch

    return torch.ops.aten.im2col(x, kernel_size, dilation, padding, stride)


def _im2col_out(p: Mapping[str, Any]) -> int:
    *lead, c, h, w = p["x"]
    (kh, kw), (dh, dw) = p["kernel_size"], p["dilation"]
    (ph, pw), (sh, sw) = p["padding"], p["stride"]
    return (numel(lead) * c * kh * kw * _out_len(h, kh, sh, ph, dh)
            * _out_len(w, kw, sw, pw, dw))


_CONV_ARGS = ("stride, padding and dilation are (h, w) pairs of ints (padding is zeros, applied "
              "on both sides of each dim); bias is (O,) or None. The output is a contiguous "
              "(N, O, OH, OW) tensor of x's dtype with OH = (H + 2*ph - dh*(KH-1) - 1) // sh + 1 "
              "(OW likewise). x may be a non-contiguous (channels-last) view. Accumulate in "
              "float32 (for float32 inputs exact products, no TF32).")


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "conv2d",
            signature="kernel(x: Tensor, weight: Tensor, bias: Tensor | None, stride: "
                      "tuple[int, int], padding: tuple[int, int], dilation: tuple[int, int]) "
                      "-> Tensor",
            description="F.conv2d(x, weight, bias, stride, padding, dilation, groups=1) for x "
                        "(N, C, H, W) and weight (O, C, KH, KW): out[n, o, i, j] = bias[o] + sum "
                        "over c, kh, kw of x[n, c, i*sh - ph + kh*dh, j*sw - pw + kw*dw] * "
                        "weight[o, c, kh, kw] (cross-correlation, no kernel flip). " + _CONV_ARGS,
            reference=in_fp32(_conv2d_native),
            baseline=_conv2d_native,
            make_inputs=_conv_inputs,
            cases=CONV2D_CASES,
            flops=lambda p: _conv_flops(numel(_conv2d_out(p)), p),
            bytes_moved=lambda p, size: _conv_bytes(numel(_conv2d_out(p)), p, size),
            tags=("conv", "conv2d"),
            reduce_dim=lambda p: numel(p["weight"][1:]),
        ),
        aten_op(
            "conv2d_depthwise",
            signature="kernel(x: Tensor, weight: Tensor, bias: Tensor | None, stride: "
                      "tuple[int, int], padding: tuple[int, int], dilation: tuple[int, int]) "
                      "-> Tensor",
            description="Depthwise convolution F.conv2d(x, weight, bias, stride, padding, "
                        "dilation, groups=C) for x (N, C, H, W) and weight (O, 1, KH, KW) with "
                        "O = C * multiplier: output channel o reads only input channel "
                        "o // multiplier, out[n, o, i, j] = bias[o] + sum over kh, kw of "
                        "x[n, o // multiplier, i*sh - ph + kh*dh, j*sw - pw + kw*dw] * "
                        "weight[o, 0, kh, kw]. " + _CONV_ARGS,
            reference=in_fp32(_depthwise_native),
            baseline=_depthwise_native,
            make_inputs=_conv_inputs,
            cases=DEPTHWISE_CASES,
            flops=lambda p: _conv_flops(numel(_conv2d_out(p)), p),
            bytes_moved=lambda p, size: _conv_bytes(numel(_conv2d_out(p)), p, size),
            tags=("conv", "conv2d", "depthwise"),
            reduce_dim=lambda p: numel(p["weight"][1:]),
        ),
        aten_op(
            "conv1d",
            signature="kernel(x: Tensor, weight: Tensor, bias: Tensor | None, stride: int, "
                      "padding: int, dilation: int) -> Tensor",
            description="F.conv1d(x, weight, bias, stride, padding, dilation, groups=1) for x "
                        "(N, C, L) and weight (O, C, K): out[n, o, i] = bias[o] + sum over c, k "
                        "of x[n, c, i*stride - padding + k*dilation] * weight[o, c, k], zero "
                        "outside the input (padding on both ends); bias is (O,) or None. The "
                        "output is a contiguous (N, O, L_out) tensor of x's dtype, L_out = "
                        "(L + 2*padding - dilation*(K-1) - 1) // stride + 1. x may be a "
                        "transposed view. Accumulate in float32 (no TF32).",
            reference=in_fp32(_conv1d_native),
            baseline=_conv1d_native,
            make_inputs=_conv_inputs,
            cases=CONV1D_CASES,
            flops=lambda p: _conv_flops(numel(_conv1d_out(p)), p),
            bytes_moved=lambda p, size: _conv_bytes(numel(_conv1d_out(p)), p, size),
            tags=("conv", "conv1d"),
            reduce_dim=lambda p: numel(p["weight"][1:]),
        ),
        aten_op(
            "im2col",
            signature="kernel(x: Tensor, kernel_size: list[int], dilation: list[int], "
                      "padding: list[int], stride: list[int]) -> Tensor",
            description="aten.im2col(x, kernel_size, dilation, padding, stride), the same as "
                        "F.unfold: for x (N, C, H, W), out[n, (c*KH + kh)*KW + kw, i*OW + j] = "
                        "x[n, c, i*sh - ph + kh*dh, j*sw - pw + kw*dw], 0 where that lies in the "
                        "zero padding; the result is a contiguous (N, C*KH*KW, OH*OW) tensor of "
                        "x's dtype, OH = (H + 2*ph - dh*(KH-1) - 1) // sh + 1 (OW likewise). A "
                        "3-D x (C, H, W) gives a 2-D (C*KH*KW, OH*OW) result. Each argument "
                        "after x is an (h, w) pair; x may be a non-contiguous (channels-last) "
                        "view.",
            reference=_im2col_reference,
            make_inputs=_im2col_inputs,
            cases=IM2COL_CASES,
            flops=lambda p: 0.0,
            bytes_moved=lambda p, size: (numel(p["x"]) + _im2col_out(p)) * size,
            tags=("conv", "unfold", "gather"),
        ),
    ]
