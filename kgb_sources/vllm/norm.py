"""vLLM's RMSNorm ops (csrc/layernorm_kernels.cu, layernorm_quant_kernels.cu,
quantization/fused_kernels/): plain, residual-fused, and fused with fp8/int8 quantisation.

vLLM's rounding, which the references follow: rstd = rsqrt(mean(x^2) + eps) in fp32 over the
row; the output is ``(scalar_t)(x * rstd) * weight``, i.e. x * rstd rounded to the storage
dtype, then multiplied by weight in fp32 and rounded again. In fused_add_rms_norm the residual
sum is rounded to the dtype first and the squares are taken of the rounded sum; in
rms_norm_dynamic_per_token_quant the squares are of the unrounded fp32 sum.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase, WithTolerance

from kgb_sources.vllm import _quant
from kgb_sources.vllm._build import ROUNDED_INTERMEDIATE, vllm_op

NORM_CASES = (
    ShapeCase("odd_tokens", {"tokens": 7, "hidden": 129, "eps": 1e-6}),
    ShapeCase("long_row", {"tokens": 3, "hidden": 2053, "eps": 1e-5}),
    ShapeCase("small_scale", {"tokens": 9, "hidden": 257, "eps": 1e-5, "scale": 0.01}),
    ShapeCase("one_token", {"tokens": 1, "hidden": 1000, "eps": 1e-6}),
    ShapeCase("heldout_rows", {"tokens": 5, "hidden": 333, "eps": 1e-6}, heldout=True),
    ShapeCase("llama3_8b_prefill", {"tokens": 4096, "hidden": 4096, "eps": 1e-5}, tier=LARGE),
    ShapeCase("deepseek_v3_decode", {"tokens": 64, "hidden": 7168, "eps": 1e-6}, tier=LARGE),
)
# rms_norm also takes an input whose rows are strided (a column slice of a wider tensor, as
# q/k norms on a fused qkv projection are called).
RMS_NORM_CASES = NORM_CASES[:4] + (
    ShapeCase("strided_rows", {"tokens": 6, "hidden": 200, "eps": 1e-6, "row_pad": 56}),
) + NORM_CASES[4:]


def _rows(p: Mapping[str, Any]) -> int:
    return int(p["tokens"])


def _bytes(p: Mapping[str, Any], size: int, reads: int, writes: int, fp8_writes: int = 0) -> float:
    elements = p["tokens"] * p["hidden"]
    return (reads + writes) * elements * size + p["hidden"] * size + fp8_writes * elements


def _x(ctx: InputContext):  # noqa: ANN202
    p = ctx.params
    scale = p.get("scale", 1.0)
    if p.get("row_pad"):
        wide = ctx.randn(p["tokens"], p["hidden"] + p["row_pad"], scale=scale)
        return wide[:, :p["hidden"]]
    return ctx.randn(p["tokens"], p["hidden"], scale=scale)


def _weight(ctx: InputContext):  # noqa: ANN202
    # Near 1, as trained norms are, but spread enough that ignoring one element shows.
    return ctx.randn(ctx.params["hidden"], scale=0.5, shift=1.0)


def _garbage(ctx: InputContext, dtype=None):  # noqa: ANN001, ANN202
    p = ctx.params
    return ctx.randn(p["tokens"], p["hidden"], scale=50.0, dtype=dtype)


# -- references --------------------------------------------------------------------------
def _rstd(x, eps):  # noqa: ANN001, ANN202 - x fp32 [rows, hidden]
    import torch

    return torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)


def _normed(x, rstd, weight, dtype):  # noqa: ANN001, ANN202 - vLLM's (scalar_t)(x*rstd) * w
    return ((x * rstd).to(dtype).float() * weight.float()).to(dtype)


def _rms_norm_reference(out, input, weight, epsilon):  # noqa: ANN001, ANN202, A002
    x = input.float()
    out.copy_(_normed(x, _rstd(x, epsilon), weight, input.dtype))


def _fused_add_reference(input, residual, weight, epsilon):  # noqa: ANN001, ANN202, A002
    total = (input.float() + residual.float()).to(input.dtype)
    residual.copy_(total)
    x = total.float()
    input.copy_(_normed(x, _rstd(x, epsilon), weight, input.dtype))


def _static_fp8_reference(out, input, weight, scale, epsilon):  # noqa: ANN001, ANN202, A002
    import torch

    x = input.float()
    normed = _normed(x, _rstd(x, epsilon), weight, input.dtype).float()
    inv_scale = torch.reciprocal(scale.float())  # vLLM: 1.0f / *scale, once
    out.copy_(_quant.to_fp8(normed * inv_scale))


def _fused_add_static_fp8_reference(out, input, residual, weight, scale,  # noqa: ANN001, ANN202
                                    epsilon):  # noqa: ANN001
    import torch

    total = (input.float() + residual.float()).to(input.dtype)
    residual.copy_(total)
    x = total.float()
    normed = _normed(x, _rstd(x, epsilon), weight, input.dtype).float()
    out.copy_(_quant.to_fp8(normed * torch.reciprocal(scale.float())))


def _dynamic_per_token_reference(out, input, weight, scales, epsilon, scale_ub,  # noqa: ANN001
                                 residual):  # noqa: ANN001, ANN202, A002
    import torch

    x = input.float()
    if residual is not None:
        x = x + residual.float()
        residual.copy_(x.to(residual.dtype))
    normed = _normed(x, _rstd(x, epsilon), weight, input.dtype).float()
    absmax = normed.abs().amax(dim=-1, keepdim=True)
    if scale_ub is not None:
        absmax = torch.minimum(absmax, scale_ub.float())
    is_int8 = out.dtype == torch.int8
    qmax = _quant.INT8_MAX if is_int8 else _quant.FP8_MAX
    min_scale = _quant.INT8_MIN_SCALE if is_int8 else _quant.FP8_MIN_SCALE
    scale = torch.clamp_min(absmax / qmax, torch.tensor(min_scale, dtype=torch.float32).item())
    scales.copy_(scale.reshape(scales.shape))
    if is_int8:
        out.copy_(_quant.to_int8(normed * torch.reciprocal(scale)))
    else:
        out.copy_(_quant.to_fp8(normed / scale))


# -- inputs ------------------------------------------------------------------------------
def _rms_norm_inputs(ctx: InputContext) -> list[Any]:
    return [_garbage(ctx), _x(ctx), _weight(ctx), float(ctx.params["eps"])]


def _fused_add_inputs(ctx: InputContext) -> list[Any]:
    return [_x(ctx), _x(ctx), _weight(ctx), float(ctx.params["eps"])]


def _static_scale(ctx: InputContext):  # noqa: ANN202
    # A calibrated scale: about max|normed| / 448 for unit-scale rows (not a power of two).
    return ctx.uniform(1, low=0.006, high=0.012, dtype=ctx.torch.float32)


def _static_fp8_inputs(ctx: InputContext) -> list[Any]:
    return [_garbage(ctx, ctx.torch.float8_e4m3fn), _x(ctx), _weight(ctx), _static_scale(ctx),
            float(ctx.params["eps"])]


def _fused_add_static_fp8_inputs(ctx: InputContext) -> list[Any]:
    return [_garbage(ctx, ctx.torch.float8_e4m3fn), _x(ctx), _x(ctx), _weight(ctx),
            _static_scale(ctx), float(ctx.params["eps"])]


def _dynamic_inputs(ctx: InputContext) -> list[Any]:
    torch = ctx.torch
    p = ctx.params
    int8 = p.get("quant") == "int8"
    out = (ctx.randint(p["tokens"], p["hidden"], low=-128, high=128, dtype=torch.int8) if int8
           else _garbage(ctx, torch.float8_e4m3fn))
    x = _x(ctx)
    if p.get("zero_row"):
        x[p["zero_row"]] = 0  # max|normed| = 0: the scale is the minimum scale, out is 0
    scales = ctx.randn(p["tokens"], 1, scale=100.0, dtype=torch.float32)
    scale_ub = (torch.tensor([p["scale_ub"]], dtype=torch.float32, device=ctx.device)
                if p.get("scale_ub") else None)
    residual = _x(ctx) if p.get("residual") else None
    return [out, x, _weight(ctx), scales, float(p["eps"]), scale_ub, residual]


DYNAMIC_CASES = (
    ShapeCase("fp8_odd", {"tokens": 7, "hidden": 129, "eps": 1e-6, "quant": "fp8"}),
    ShapeCase("fp8_residual_zero_row", {"tokens": 3, "hidden": 1100, "eps": 1e-5,
                                        "quant": "fp8", "residual": True, "zero_row": 1}),
    ShapeCase("fp8_scale_ub", {"tokens": 4, "hidden": 256, "eps": 1e-6, "quant": "fp8",
                               "scale_ub": 1.5}),
    ShapeCase("int8_residual", {"tokens": 5, "hidden": 200, "eps": 1e-6, "quant": "int8",
                                "residual": True}),
    ShapeCase("heldout_int8", {"tokens": 4, "hidden": 333, "eps": 1e-5, "quant": "int8"},
              heldout=True),
    ShapeCase("llama3_8b_fp8_residual", {"tokens": 4096, "hidden": 4096, "eps": 1e-5,
                                         "quant": "fp8", "residual": True}, tier=LARGE),
    ShapeCase("deepseek_int8", {"tokens": 256, "hidden": 7168, "eps": 1e-6, "quant": "int8"},
              tier=LARGE),
)


# -- rms_norm_per_block_quant --------------------------------------------------------------
def _per_block_reference(out, input, weight, scales, epsilon, scale_ub, residual,  # noqa: ANN001
                         group_size, is_scale_transposed):  # noqa: ANN001, ANN202, A002
    import torch

    x = input.float()
    if residual is not None:
        x = x + residual.float()
        residual.copy_(x.to(residual.dtype))
    normed = _normed(x, _rstd(x, epsilon), weight, input.dtype).float()
    tokens, hidden = normed.shape
    groups = normed.reshape(tokens, hidden // group_size, group_size)
    absmax = groups.abs().amax(dim=-1)
    if scale_ub is not None:
        absmax = torch.minimum(absmax, scale_ub.float())
    is_int8 = out.dtype == torch.int8
    qmax = _quant.INT8_MAX if is_int8 else _quant.FP8_MAX
    min_scale = _quant.INT8_MIN_SCALE if is_int8 else _quant.FP8_MIN_SCALE
    scale = torch.clamp_min(absmax / qmax, min_scale)
    # scales is [tokens, groups], row-major or (is_scale_transposed) a transposed
    # [groups, tokens] buffer: copy_ honours its strides either way.
    scales.copy_(scale)
    per_element = scale.repeat_interleave(group_size, dim=1)
    if is_int8:
        out.copy_(_quant.to_int8(normed * torch.reciprocal(per_element)))
    else:
        out.copy_(_quant.to_fp8(normed / per_element))


def _per_block_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    tokens, hidden, group = p["tokens"], p["hidden"], p["group_size"]
    int8 = p.get("quant") == "int8"
    out = (ctx.randint(tokens, hidden, low=-128, high=128, dtype=torch.int8) if int8
           else _garbage(ctx, torch.float8_e4m3fn))
    x = _x(ctx)
    if p.get("zero_group") is not None:
        row, g = p["zero_group"]
        x[row, g * group:(g + 1) * group] = 0  # a group of zeros: its scale is the minimum
    groups = hidden // group
    if p.get("transposed"):
        scales = ctx.randn(groups, tokens, scale=100.0, dtype=torch.float32).t()
    else:
        scales = ctx.randn(tokens, groups, scale=100.0, dtype=torch.float32)
    scale_ub = (torch.tensor([p["scale_ub"]], dtype=torch.float32, device=ctx.device)
                if p.get("scale_ub") else None)
    residual = None
    if p.get("residual"):
        residual = _x(ctx)
        if p.get("zero_group") is not None:
            row, g = p["zero_group"]
            # input + residual is zero over the group: both are zeros there.
            residual[row, g * group:(g + 1) * group] = 0
    return [out, x, _weight(ctx), scales, float(p["eps"]), scale_ub, residual, int(group),
            bool(p.get("transposed", False))]


PER_BLOCK_CASES = (
    ShapeCase("fp8_g128", {"tokens": 5, "hidden": 384, "group_size": 128, "eps": 1e-6,
                           "quant": "fp8"}),
    ShapeCase("fp8_transposed_residual_zero_group", {
        "tokens": 4, "hidden": 256, "group_size": 128, "eps": 1e-5, "quant": "fp8",
        "transposed": True, "residual": True, "zero_group": (1, 1)}),
    ShapeCase("fp8_g64_scale_ub", {"tokens": 3, "hidden": 320, "group_size": 64, "eps": 1e-6,
                                   "quant": "fp8", "scale_ub": 0.9}),
    ShapeCase("int8_g128_residual_zero_group", {
        "tokens": 6, "hidden": 256, "group_size": 128, "eps": 1e-6, "quant": "int8",
        "residual": True, "zero_group": (2, 0)}),
    ShapeCase("heldout_int8_transposed", {"tokens": 3, "hidden": 192, "group_size": 64,
                                          "eps": 1e-5, "quant": "int8", "transposed": True},
              heldout=True),
    ShapeCase("deepseek_v3_prefill_fp8", {"tokens": 4096, "hidden": 7168, "group_size": 128,
                                          "eps": 1e-6, "quant": "fp8", "transposed": True,
                                          "residual": True}, tier=LARGE),
    ShapeCase("qwen3_decode_int8", {"tokens": 256, "hidden": 4096, "group_size": 128,
                                    "eps": 1e-6, "quant": "int8"}, tier=LARGE),
)


def _compare_per_block(returned: Any, args: Sequence[Any]) -> Any:
    # scales at the op's dtype tolerance: a group maximum is a value of the storage dtype.
    return [_quant.quantized_values(args[0]), args[3].contiguous(), args[6]]


# -- what is compared --------------------------------------------------------------------
def _compare_static_fp8(residual_index: int | None):  # noqa: ANN202
    def compared(returned: Any, args: Sequence[Any]) -> Any:
        values = [_quant.quantized_values(args[0])]
        if residual_index is not None:
            values.append(args[residual_index])  # at the op's dtype tolerance
        return values

    return compared


def _compare_dynamic(returned: Any, args: Sequence[Any]) -> Any:
    # scales at the op's dtype tolerance: max|normed| is a value of the storage dtype, which
    # two correct kernels may round one ulp apart.
    return [_quant.quantized_values(args[0]), args[3], args[6]]


RMS_RULE = ("rstd = 1 / sqrt(mean(x^2) + epsilon) over the last dim in float32; the normed "
            "value is (x * rstd) rounded to the storage dtype, then multiplied by weight in "
            "float32 and rounded to the storage dtype again, as vLLM's "
            "(scalar_t)(x * rstd) * weight does.")


def operators() -> list[OperatorSpec]:
    sig_rms = "kernel(out: Tensor, input: Tensor, weight: Tensor, epsilon: float) -> None"
    return [
        vllm_op(
            "rms_norm",
            signature=sig_rms,
            description=(
                "vLLM's rms_norm: input [num_tokens, hidden] (its rows may be strided: "
                "input.stride(0) can exceed hidden, the last dim is contiguous), weight "
                "[hidden]; writes out (contiguous, same shape and dtype) = rms_norm(input) * "
                "weight and returns None. " + RMS_RULE + " input and weight must be left "
                "unchanged. dtypes float32, float16, bfloat16."),
            reference=_rms_norm_reference, make_inputs=_rms_norm_inputs, cases=RMS_NORM_CASES,
            flops=lambda p: 4 * p["tokens"] * p["hidden"],
            bytes_moved=lambda p, size: _bytes(p, size, 1, 1),
            tags=("norm", "out_param"), mutated_args=(0,),
            tolerances=ROUNDED_INTERMEDIATE,
            vllm_callable="vllm._custom_ops.rms_norm",
        ),
        vllm_op(
            "fused_add_rms_norm",
            signature="kernel(input: Tensor, residual: Tensor, weight: Tensor, "
                      "epsilon: float) -> None",
            description=(
                "vLLM's fused_add_rms_norm, in place on both input and residual (each "
                "[num_tokens, hidden], contiguous, same dtype; weight [hidden]): first "
                "residual <- input + residual (summed in float32, rounded to the dtype), then "
                "input <- rms_norm(residual) * weight, with the squares taken of the rounded "
                "residual. " + RMS_RULE + " Returns None; both input and residual must hold "
                "their new values afterwards, weight must be left unchanged."),
            reference=_fused_add_reference, make_inputs=_fused_add_inputs, cases=NORM_CASES,
            flops=lambda p: 5 * p["tokens"] * p["hidden"],
            bytes_moved=lambda p, size: _bytes(p, size, 2, 2),
            tags=("norm", "inplace"), mutated_args=(0, 1),
            tolerances=ROUNDED_INTERMEDIATE,
            vllm_callable="vllm._custom_ops.fused_add_rms_norm",
        ),
        vllm_op(
            "rms_norm_static_fp8_quant",
            signature="kernel(out: Tensor, input: Tensor, weight: Tensor, scale: Tensor, "
                      "epsilon: float) -> None",
            description=(
                "vLLM's rms_norm_static_fp8_quant: input [num_tokens, hidden] (float32, "
                "float16 or bfloat16), weight [hidden] of input's dtype, scale a float32 "
                "tensor of shape [1]; writes out [num_tokens, hidden] (torch.float8_e4m3fn) = "
                "fp8(normed * (1 / scale)), where 1 / scale is computed once in float32 (vLLM "
                "multiplies by the inverted scale). " + RMS_RULE + " " + _quant.FP8_RULE +
                " Returns None; input, weight and scale must be left unchanged."),
            reference=_static_fp8_reference, make_inputs=_static_fp8_inputs, cases=NORM_CASES,
            flops=lambda p: 6 * p["tokens"] * p["hidden"],
            bytes_moved=lambda p, size: _bytes(p, size, 1, 0, fp8_writes=1),
            tags=("norm", "quant", "out_param"), mutated_args=(0,),
            compared=_compare_static_fp8(None),
            vllm_callable="torch.ops._C.rms_norm_static_fp8_quant",
        ),
        vllm_op(
            "fused_add_rms_norm_static_fp8_quant",
            signature="kernel(out: Tensor, input: Tensor, residual: Tensor, weight: Tensor, "
                      "scale: Tensor, epsilon: float) -> None",
            description=(
                "vLLM's fused_add_rms_norm_static_fp8_quant: residual <- input + residual in "
                "place (summed in float32, rounded to the dtype), then out [num_tokens, "
                "hidden] (torch.float8_e4m3fn) = fp8(rms_norm(residual) * weight * (1 / "
                "scale)), 1 / scale computed once in float32, the squares taken of the rounded "
                "residual. Unlike fused_add_rms_norm, input is only read: it must be left "
                "unchanged, as must weight and scale (float32, shape [1]). " + RMS_RULE + " "
                + _quant.FP8_RULE + " Returns None."),
            reference=_fused_add_static_fp8_reference, make_inputs=_fused_add_static_fp8_inputs,
            cases=NORM_CASES,
            flops=lambda p: 7 * p["tokens"] * p["hidden"],
            bytes_moved=lambda p, size: _bytes(p, size, 2, 1, fp8_writes=1),
            tags=("norm", "quant", "inplace", "out_param"), mutated_args=(0, 2),
            compared=_compare_static_fp8(2),
            vllm_callable="torch.ops._C.fused_add_rms_norm_static_fp8_quant",
        ),
        vllm_op(
            "rms_norm_dynamic_per_token_quant",
            signature="kernel(out: Tensor, input: Tensor, weight: Tensor, scales: Tensor, "
                      "epsilon: float, scale_ub: Tensor | None, residual: Tensor | None) -> None",
            description=(
                "vLLM's rms_norm_dynamic_per_token_quant (torch.ops._C, the op under "
                "vllm._custom_ops.rms_norm_dynamic_per_token_quant): input [num_tokens, "
                "hidden], weight [hidden] (same dtype), out [num_tokens, hidden] of dtype "
                "torch.float8_e4m3fn or torch.int8 (the quantised type is out's dtype), scales "
                "float32 [num_tokens, 1]. If residual (same shape and dtype as input) is given: "
                "x = input + residual in float32 and residual <- x rounded to the dtype, in "
                "place; else x = input. rstd from the squares of the unrounded float32 x. "
                + RMS_RULE + " Per token: absmax = max |normed|, clamped from above by "
                "scale_ub[0] when scale_ub (float32 [1], fp8 only) is given; scale = "
                "max(absmax / qmax, min_scale) with qmax 448 for fp8 and 127 for int8 and "
                "min_scale = 1 / (448 * 512) for fp8 and FLT_EPSILON (2^-23) for int8 (vLLM's "
                "min_scaling_factor; a token of zeros gets it), written to scales[token, 0]. "
                "fp8: out = fp8(normed / scale) (divided, not "
                "multiplied by an inverse). int8: out = round(normed * (1 / scale)) with 1 / "
                "scale computed once in float32. " + _quant.FP8_RULE + " "
                + _quant.INT8_RULE + " int8 values are compared within one step, scales at "
                "the input dtype's tolerance. Returns None; input, weight and scale_ub must be "
                "left unchanged."),
            reference=_dynamic_per_token_reference, make_inputs=_dynamic_inputs,
            cases=DYNAMIC_CASES,
            flops=lambda p: 8 * p["tokens"] * p["hidden"],
            bytes_moved=lambda p, size: _bytes(p, size, 2 if p.get("residual") else 1,
                                               1 if p.get("residual") else 0, fp8_writes=1),
            tags=("norm", "quant", "out_param", "inplace"), mutated_args=(0, 3, 6),
            compared=_compare_dynamic,
            vllm_callable="torch.ops._C.rms_norm_dynamic_per_token_quant",
        ),
        vllm_op(
            "rms_norm_per_block_quant",
            signature="kernel(out: Tensor, input: Tensor, weight: Tensor, scales: Tensor, "
                      "epsilon: float, scale_ub: Tensor | None, residual: Tensor | None, "
                      "group_size: int, is_scale_transposed: bool) -> None",
            description=(
                "vLLM's rms_norm_per_block_quant (torch.ops._C, under "
                "vllm._custom_ops.rms_norm_per_block_quant): RMSNorm fused with per-group "
                "(DeepSeek-style block) dynamic quantisation. input [num_tokens, hidden] "
                "(contiguous), weight [hidden] (same dtype), hidden a multiple of group_size "
                "(128 or 64); out [num_tokens, hidden] of dtype torch.float8_e4m3fn or "
                "torch.int8 (the quantised type is out's dtype). If residual (same shape and "
                "dtype as input) is given: x = input + residual in float32 and residual <- x "
                "rounded to the dtype, in place; else x = input. rstd from the squares of the "
                "unrounded float32 x over the whole row. " + RMS_RULE + " Each row is cut "
                "into groups of group_size consecutive columns; per group: absmax = max "
                "|normed|, clamped from above by scale_ub[0] when scale_ub (float32 [1], fp8 "
                "only) is given; scale = max(absmax / qmax, min_scale), qmax 448 (fp8) or 127 "
                "(int8), min_scale 1 / (448 * 512) (fp8) or FLT_EPSILON = 2^-23 (int8); "
                "written to scales[token, group]. scales (float32) is a [num_tokens, hidden / "
                "group_size] view: row-major, or, when is_scale_transposed, the transpose of a "
                "contiguous [hidden / group_size, num_tokens] buffer (honour its strides). "
                "fp8: out = fp8(normed / scale) (a division); int8: out = round(normed * (1 / "
                "scale)). " + _quant.FP8_RULE + " " + _quant.INT8_RULE + " Quantised values "
                "are compared within one step, scales at the input dtype's tolerance. Returns "
                "None; input, weight and scale_ub must be left unchanged."),
            reference=_per_block_reference, make_inputs=_per_block_inputs,
            cases=PER_BLOCK_CASES,
            flops=lambda p: 8 * p["tokens"] * p["hidden"],
            bytes_moved=lambda p, size: _bytes(p, size, 2 if p.get("residual") else 1,
                                               1 if p.get("residual") else 0, fp8_writes=1),
            tags=("norm", "quant", "out_param", "inplace"), mutated_args=(0, 3, 6),
            compared=_compare_per_block,
            vllm_callable="torch.ops._C.rms_norm_per_block_quant",
        ),
    ]
