"""Pooling: max_pool2d, avg_pool2d (count_include_pad either way) and adaptive_avg_pool2d
with ATen's overlapping bins.

Small cases use odd image sizes, strides unlike the kernel size, rectangular windows, padding
(where padding semantics differ: -inf for max, zero and a divisor rule for avg), output sizes
that do not divide the input (adaptive bins of unequal length, and an upsampling one), and a
channels-last input so that a kernel must use strides. Averages sum KH * KW terms, which is
``reduce_dim``; a max is exact.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, numel

# "x" (N, C, H, W); kernel_size, stride, padding (and dilation for max) as (h, w) pairs;
# "channels_last" stores x NHWC (a permuted view).
MAX_POOL_CASES = (
    ShapeCase("3x3_stride2_pad1", {"x": (2, 3, 11, 13), "kernel_size": (3, 3), "stride": (2, 2),
                                   "padding": (1, 1), "dilation": (1, 1)}),
    ShapeCase("rect_window", {"x": (1, 4, 10, 9), "kernel_size": (2, 3), "stride": (2, 1),
                              "padding": (1, 1), "dilation": (1, 1)}),
    ShapeCase("2x2_no_pad", {"x": (2, 5, 12, 12), "kernel_size": (2, 2), "stride": (2, 2),
                             "padding": (0, 0), "dilation": (1, 1)}),
    ShapeCase("dilated_channels_last", {"x": (1, 6, 9, 14), "kernel_size": (3, 3),
                                        "stride": (1, 1), "padding": (1, 1), "dilation": (2, 2),
                                        "channels_last": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_mixed", {"x": (2, 3, 8, 11), "kernel_size": (3, 2), "stride": (1, 2),
                                "padding": (1, 0), "dilation": (1, 2)}, heldout=True),
    ShapeCase("resnet_stem", {"x": (32, 64, 112, 112), "kernel_size": (3, 3), "stride": (2, 2),
                              "padding": (1, 1), "dilation": (1, 1)}, tier=LARGE),
)

AVG_POOL_CASES = (
    ShapeCase("3x3_stride2_pad1", {"x": (2, 3, 11, 13), "kernel_size": (3, 3), "stride": (2, 2),
                                   "padding": (1, 1), "count_include_pad": True}),
    ShapeCase("exclude_pad_rect", {"x": (1, 4, 10, 9), "kernel_size": (3, 2), "stride": (2, 1),
                                   "padding": (1, 1), "count_include_pad": False}),
    ShapeCase("2x2_no_pad", {"x": (2, 5, 12, 12), "kernel_size": (2, 2), "stride": (2, 2),
                             "padding": (0, 0), "count_include_pad": True}),
    ShapeCase("exclude_pad_channels_last", {"x": (1, 6, 9, 14), "kernel_size": (3, 3),
                                            "stride": (1, 1), "padding": (1, 1),
                                            "count_include_pad": False, "channels_last": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_mixed", {"x": (2, 3, 8, 11), "kernel_size": (3, 3), "stride": (2, 3),
                                "padding": (1, 1), "count_include_pad": True}, heldout=True),
    ShapeCase("inception_3x3", {"x": (32, 256, 56, 56), "kernel_size": (3, 3), "stride": (1, 1),
                                "padding": (1, 1), "count_include_pad": False}, tier=LARGE),
    ShapeCase("resnet_2x2", {"x": (32, 512, 56, 56), "kernel_size": (2, 2), "stride": (2, 2),
                             "padding": (0, 0), "count_include_pad": True}, tier=LARGE),
)

# "output_size" (OH, OW).
ADAPTIVE_CASES = (
    ShapeCase("uneven_bins", {"x": (2, 3, 11, 13), "output_size": (4, 5)}),
    ShapeCase("overlapping_bins", {"x": (1, 4, 10, 9), "output_size": (3, 7)}),
    ShapeCase("upsampling", {"x": (1, 3, 5, 4), "output_size": (7, 9)}),
    ShapeCase("channels_last", {"x": (2, 6, 9, 14), "output_size": (4, 3),
                                "channels_last": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_uneven", {"x": (2, 3, 13, 8), "output_size": (6, 5)}, heldout=True),
    ShapeCase("resnet_head", {"x": (32, 2048, 7, 7), "output_size": (1, 1)}, tier=LARGE),
    ShapeCase("uneven_7x7", {"x": (32, 256, 50, 50), "output_size": (7, 7)}, tier=LARGE),
)


def _out_len(size: int, kernel: int, stride: int, padding: int, dilation: int = 1) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _pool_out(p: Mapping[str, Any]) -> int:
    n, c, h, w = p["x"]
    (kh, kw), (sh, sw) = p["kernel_size"], p["stride"]
    (ph, pw), (dh, dw) = p["padding"], p.get("dilation", (1, 1))
    return n * c * _out_len(h, kh, sh, ph, dh) * _out_len(w, kw, sw, pw, dw)


def _image(ctx: InputContext) -> Any:
    p = ctx.params
    if p.get("channels_last"):
        n, c, h, w = p["x"]
        return ctx.randn(n, h, w, c).permute(0, 3, 1, 2)
    return ctx.randn(*p["x"])


def _max_pool_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    return [_image(ctx), p["kernel_size"], p["stride"], p["padding"], p["dilation"]]


def _max_pool_reference(x, kernel_size, stride, padding, dilation):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode=False)


def _avg_pool_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    return [_image(ctx), p["kernel_size"], p["stride"], p["padding"],
            bool(p["count_include_pad"])]


def _avg_pool_reference(x, kernel_size, stride, padding, count_include_pad):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.avg_pool2d(x, kernel_size, stride, padding, ceil_mode=False,
                        count_include_pad=count_include_pad)


def _adaptive_inputs(ctx: InputContext) -> list[Any]:
    return [_image(ctx), ctx.params["output_size"]]


def _adaptive_reference(x, output_size):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.adaptive_avg_pool2d(x, output_size)


def _max_bin(size: int, out: int) -> int:
    return max(-(-(i + 1) * size // out) - (i * size) // out for i in range(out))


def _adaptive_window(p: Mapping[str, Any]) -> int:
    _, _, h, w = p["x"]
    oh, ow = p["output_size"]
    return _max_bin(h, oh) * _max_bin(w, ow)


def _adaptive_out(p: Mapping[str, Any]) -> int:
    return numel(p["x"][:2]) * numel(p["output_size"])


_POOL_ARGS = ("kernel_size, stride and padding are (h, w) pairs of ints (padding at most half "
              "the window, on both sides); ceil_mode is False, so OH = (H + 2*ph - KH) // sh + 1 "
              "(OW likewise). The output is a contiguous (N, C, OH, OW) tensor of x's dtype; x "
              "may be a non-contiguous (channels-last) view.")


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "max_pool2d",
            signature="kernel(x: Tensor, kernel_size: tuple[int, int], stride: tuple[int, int], "
                      "padding: tuple[int, int], dilation: tuple[int, int]) -> Tensor",
            description="F.max_pool2d(x, kernel_size, stride, padding, dilation, "
                        "ceil_mode=False) for x (N, C, H, W): out[n, c, i, j] = max over kh, kw "
                        "of x[n, c, i*sh - ph + kh*dh, j*sw - pw + kw*dw], where padded "
                        "positions count as -inf (they never win) and NaN propagates. With "
                        "dilation, OH = (H + 2*ph - dh*(KH-1) - 1) // sh + 1. " + _POOL_ARGS,
            reference=_max_pool_reference,
            make_inputs=_max_pool_inputs,
            cases=MAX_POOL_CASES,
            flops=lambda p: float(_pool_out(p) * numel(p["kernel_size"])),
            bytes_moved=lambda p, size: (numel(p["x"]) + _pool_out(p)) * size,
            tags=("pool", "max_pool"),
        ),
        aten_op(
            "avg_pool2d",
            signature="kernel(x: Tensor, kernel_size: tuple[int, int], stride: tuple[int, int], "
                      "padding: tuple[int, int], count_include_pad: bool) -> Tensor",
            description="F.avg_pool2d(x, kernel_size, stride, padding, ceil_mode=False, "
                        "count_include_pad=count_include_pad) for x (N, C, H, W): the sum of x "
                        "over each KH x KW window at (i*sh - ph, j*sw - pw), padded positions "
                        "adding zero, divided by KH*KW when count_include_pad is True (the ATen "
                        "default) or by the number of window positions inside the image when "
                        "it is False. Sum in float32. " + _POOL_ARGS,
            reference=_avg_pool_reference,
            make_inputs=_avg_pool_inputs,
            cases=AVG_POOL_CASES,
            flops=lambda p: float(_pool_out(p) * (numel(p["kernel_size"]) + 1)),
            bytes_moved=lambda p, size: (numel(p["x"]) + _pool_out(p)) * size,
            tags=("pool", "avg_pool"),
            reduce_dim=lambda p: numel(p["kernel_size"]),
        ),
        aten_op(
            "adaptive_avg_pool2d",
            signature="kernel(x: Tensor, output_size: tuple[int, int]) -> Tensor",
            description="F.adaptive_avg_pool2d(x, output_size) for x (N, C, H, W) and "
                        "output_size (OH, OW): out[n, c, i, j] is the mean of x[n, c] over rows "
                        "floor(i*H/OH) <= h < ceil((i+1)*H/OH) and columns floor(j*W/OW) <= w < "
                        "ceil((j+1)*W/OW) (ATen's bins: unequal, and overlapping where OH does "
                        "not divide H; OH may exceed H). Sum in float32. The output is a "
                        "contiguous (N, C, OH, OW) tensor of x's dtype; x may be a "
                        "non-contiguous (channels-last) view.",
            reference=_adaptive_reference,
            make_inputs=_adaptive_inputs,
            cases=ADAPTIVE_CASES,
            flops=lambda p: float(_adaptive_out(p) * (_adaptive_window(p) + 1)),
            bytes_moved=lambda p, size: (numel(p["x"]) + _adaptive_out(p)) * size,
            tags=("pool", "avg_pool", "adaptive"),
            reduce_dim=_adaptive_window,
        ),
    ]
