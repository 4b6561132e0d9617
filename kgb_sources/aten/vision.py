"""Vision ops: affine_grid_generator (F.affine_grid's base grid times theta) and
upsample_nearest2d_backward (the gradient of nearest upsampling).

affine_grid cases cover both align_corners values, a size of 1 (whose coordinate is 0), odd
sizes and a transposed theta view. The upsampling gradient is taken for ratios that are not
integers (7 from 5, 11 from 4), an exact 2x, a downsampling one (some input pixels receive
nothing) and a channels-last grad_output; ATen maps output index d to source floor(d * in /
out) computed in float32, and a kernel must follow that rule at every block edge.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, in_fp32, numel

# "size" (N, C, H, W); "theta_transposed" makes theta a transposed view of an (N, 3, 2) tensor.
AFFINE_GRID_CASES = (
    ShapeCase("odd_no_align", {"size": (2, 3, 7, 11), "align_corners": False}),
    ShapeCase("align_corners", {"size": (3, 1, 5, 4), "align_corners": True}),
    ShapeCase("height_two", {"size": (1, 2, 2, 9), "align_corners": False}),
    ShapeCase("theta_transposed_align", {"size": (2, 1, 13, 6), "align_corners": True,
                                         "theta_transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_no_align", {"size": (4, 3, 9, 8), "align_corners": False}, heldout=True),
    ShapeCase("stn_512", {"size": (32, 3, 512, 512), "align_corners": False}, tier=LARGE),
    ShapeCase("hd_align", {"size": (8, 3, 1080, 1920), "align_corners": True}, tier=LARGE),
)

# "input" (N, C, H_in, W_in) and "output" (H_out, W_out) of the forward upsampling.
UPSAMPLE_BACKWARD_CASES = (
    ShapeCase("ratio_1.4_by_2.75", {"input": (2, 3, 5, 4), "output": (7, 11)}),
    ShapeCase("exact_2x", {"input": (1, 4, 5, 6), "output": (10, 12)}),
    ShapeCase("downsampling", {"input": (2, 2, 7, 9), "output": (3, 4)}),
    ShapeCase("channels_last_grad", {"input": (1, 5, 4, 6), "output": (9, 13),
                                     "channels_last": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_mixed", {"input": (2, 3, 6, 5), "output": (17, 5)}, heldout=True),
    ShapeCase("unet_2x", {"input": (16, 64, 112, 112), "output": (224, 224)}, tier=LARGE),
    ShapeCase("non_integer", {"input": (8, 128, 128, 128), "output": (300, 300)}, tier=LARGE),
)


def _affine_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    n = p["size"][0]
    if p.get("theta_transposed"):
        theta = ctx.randn(n, 3, 2).transpose(1, 2)
    else:
        theta = ctx.randn(n, 2, 3)
    return [theta, list(p["size"]), bool(p["align_corners"])]


def _affine_native(theta, size, align_corners):  # noqa: ANN001, ANN202
    import torch

    return torch.ops.aten.affine_grid_generator(theta, size, align_corners)


# The reference: the grid computed in fp32 from theta's values, rounded once to theta's dtype
# (in_fp32).
#
# What ATen does for fp16/bf16 (AffineGridGenerator.cpp): it builds the base grid in theta's
# dtype with linspace, then multiplies by theta with a bmm. linspace is the same formula on
# both devices (cpu/RangeFactoriesKernel.cpp and cuda/RangeFactories.cu): step = (1 - -1) /
# (steps - 1), then -1 + step * i for i < steps // 2 and 1 - step * (steps - 1 - i) above,
# all in c10's Half/BFloat16 arithmetic, where every operation is rounded to the dtype and an
# integer operand is first converted to it (c10's operator*(BFloat16, int64_t) is
# a * BFloat16(b)). So bf16 rounds steps - 1 (1079 becomes 1080) and every index past 256
# (401 becomes 400). Measured on CPU (torch 2.13), a bf16 coordinate is off the fp32 one
# rounded once by up to 0.0055 (1080 steps) and 0.0068 (1920), an fp16 one by up to 0.00049,
# where atol is 0.0003 (times |theta| in the grid). Without align_corners the range is then
# multiplied by (steps - 1) and divided by steps as two more rounded ops. The bmm sums the 3
# terms in fp32 and rounds once (CPU: measured, bitwise equal to that emulation on every
# case here, torch 2.13; CUDA: cuBLAS with reduced-precision reductions off). The CUDA
# linspace was read from the source, not measured.
#
# Emulating those roundings makes a kernel reproduce an implementation detail rather than
# the operator, and a kernel that rounded the coordinates but kept the indices exact failed
# on an H200 (hd_align, bf16: 911927 of 33177600 points, max error 0.031). So for fp16/bf16
# the reference is ATen's fp32 computation, which rounds only at the end (CPU and CUDA agree
# to fp32 rounding), and the native call is the timing baseline.
_affine_reference = in_fp32(_affine_native)


def _grid_points(p: Mapping[str, Any]) -> int:
    n, _, h, w = p["size"]
    return n * h * w


def _upsample_backward_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    n, c, _, _ = p["input"]
    h_out, w_out = p["output"]
    if p.get("channels_last"):
        grad = ctx.randn(n, h_out, w_out, c).permute(0, 3, 1, 2)
    else:
        grad = ctx.randn(n, c, h_out, w_out)
    return [grad, list(p["output"]), list(p["input"]), None, None]


def _upsample_backward_reference(grad_output, output_size, input_size, scales_h,
                                 scales_w):  # noqa: ANN001, ANN202
    import torch

    return torch.ops.aten.upsample_nearest2d_backward(grad_output, output_size, input_size,
                                                      scales_h, scales_w)


def _block_terms(p: Mapping[str, Any]) -> int:
    """Most output pixels summed into one input pixel: ceil(out/in) per dim."""
    _, _, h_in, w_in = p["input"]
    h_out, w_out = p["output"]
    return -(-h_out // h_in) * -(-w_out // w_in)


def _grad_out_elements(p: Mapping[str, Any]) -> int:
    return numel(p["input"][:2]) * numel(p["output"])


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "affine_grid_generator",
            signature="kernel(theta: Tensor, size: list[int], align_corners: bool) -> Tensor",
            description="aten.affine_grid_generator(theta, size, align_corners), what "
                        "F.affine_grid computes for a 4-D size: theta is (N, 2, 3), size is "
                        "[N, C, H, W], and the result is a contiguous (N, H, W, 2) tensor of "
                        "theta's dtype with grid[n, h, w] = theta[n] @ (x[w], y[h], 1). x = "
                        "linspace(-1, 1, W) (y likewise with H), multiplied by (W - 1) / W when "
                        "align_corners is False; a size of 1 gives the coordinate 0. Compute "
                        "the coordinates and the product in float32 and round once to theta's "
                        "dtype (ATen's own fp16/bf16 path rounds every coordinate to the dtype "
                        "first, which is less accurate and not what is checked). theta may be "
                        "a non-contiguous view.",
            reference=_affine_reference,
            baseline=_affine_native,
            make_inputs=_affine_inputs,
            cases=AFFINE_GRID_CASES,
            flops=lambda p: 12.0 * _grid_points(p),
            bytes_moved=lambda p, size: (6 * p["size"][0] + 2 * _grid_points(p)) * size,
            tags=("gemm", "vision", "grid"),
            reduce_dim=lambda p: 3,
        ),
        aten_op(
            "upsample_nearest2d_backward",
            signature="kernel(grad_output: Tensor, output_size: list[int], input_size: "
                      "list[int], scales_h: float | None, scales_w: float | None) -> Tensor",
            description="aten.upsample_nearest2d_backward(grad_output, output_size, input_size, "
                        "scales_h, scales_w): the gradient of nearest upsampling from input_size "
                        "[N, C, H_in, W_in] to output_size [H_out, W_out]. The forward reads, "
                        "for output row d, input row src(d) = min(floor(d * s), H_in - 1) with "
                        "s = float32(H_in) / float32(H_out) and the product d * s in float32 "
                        "(columns likewise; scales are None here, otherwise s = 1 / scales). "
                        "So grad_input[n, c, i, j] = sum of grad_output[n, c, oh, ow] over all "
                        "oh with src(oh) == i and ow with src(ow) == j (0 if none). The result "
                        "is a contiguous (N, C, H_in, W_in) tensor of grad_output's dtype; sum "
                        "in float32. grad_output may be a non-contiguous (channels-last) view.",
            reference=_upsample_backward_reference,
            make_inputs=_upsample_backward_inputs,
            cases=UPSAMPLE_BACKWARD_CASES,
            flops=lambda p: float(_grad_out_elements(p)),
            bytes_moved=lambda p, size: (_grad_out_elements(p) + numel(p["input"])) * size,
            tags=("pool", "vision", "upsample", "backward"),
            reduce_dim=_block_terms,
        ),
    ]
