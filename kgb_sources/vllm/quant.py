"""vLLM's activation quantisation ops (csrc/quantization/w8a8/fp8/common.cu, int8/scaled_quant.cu,
fp8/per_token_group_quant.cu) and the kv-cache fp8 conversion (csrc/cache_kernels.cu).

vLLM's Python wrappers allocate the outputs and return them: ``scaled_fp8_quant(input, scale=None,
use_per_token_if_dynamic=False, scale_ub=None) -> (output, scale)`` calls, by its arguments,
``torch.ops._C.static_scaled_fp8_quant(out, input, scale)`` (scale given),
``dynamic_scaled_fp8_quant(out, input, scale)`` (per tensor) or
``dynamic_per_token_scaled_fp8_quant(out, input, scales, scale_ub)`` (per token);
``scaled_int8_quant(input, scale=None, azp=None, symmetric=True)`` calls
``static_scaled_int8_quant(out, input, scale, azp)`` or ``dynamic_scaled_int8_quant(out, input,
scales, azp)``; ``per_token_group_quant_fp8(x, group_size, column_major_scales=...)`` calls
``per_token_group_fp8_quant(input, output_q, output_s, group_size, eps, fp8_min, fp8_max,
scale_ue8m0)``. kgb checks the underlying ops, each with its out-parameters, under their names.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase, WithTolerance

from kgb_sources.vllm import _quant
from kgb_sources.vllm._build import vllm_op

TOKEN_CASES = (
    ShapeCase("odd_tokens", {"tokens": 7, "hidden": 129}),
    ShapeCase("long_row", {"tokens": 3, "hidden": 2053}),
    ShapeCase("batched_3d", {"tokens": 6, "hidden": 200, "batch": 2}),
    ShapeCase("one_token", {"tokens": 1, "hidden": 1000}),
    ShapeCase("heldout_rows", {"tokens": 5, "hidden": 333}, heldout=True),
    ShapeCase("llama3_8b_prefill", {"tokens": 4096, "hidden": 4096}, tier=LARGE),
    ShapeCase("deepseek_v3_mlp", {"tokens": 512, "hidden": 18432}, tier=LARGE),
)


# dynamic_scaled_fp8_quant launches three kernels a call: fewer rows keep it quick on CPU.
DYNAMIC_FP8_CASES = (
    ShapeCase("odd_tokens", {"tokens": 5, "hidden": 129}),
    ShapeCase("long_row", {"tokens": 2, "hidden": 2053}),
    ShapeCase("batched_3d", {"tokens": 3, "hidden": 200, "batch": 2}),
    ShapeCase("heldout_rows", {"tokens": 3, "hidden": 333}, heldout=True),
) + tuple(c for c in TOKEN_CASES if c.tier == LARGE)


def _shape(p: Mapping[str, Any]) -> tuple[int, ...]:
    return ((p["batch"], p["tokens"], p["hidden"]) if p.get("batch")
            else (p["tokens"], p["hidden"]))


def _elements(p: Mapping[str, Any]) -> int:
    return p.get("batch", 1) * p["tokens"] * p["hidden"]


def _token_rows(p: Mapping[str, Any]) -> int:
    return p.get("batch", 1) * p["tokens"]


def _bytes(p: Mapping[str, Any], size: int) -> float:
    return _elements(p) * (size + 1) + 8 * _token_rows(p)


def _x(ctx: InputContext, scale: float = 2.0):  # noqa: ANN202
    return ctx.randn(*_shape(ctx.params), scale=scale)


def _fp8_garbage(ctx: InputContext):  # noqa: ANN202
    return ctx.randn(*_shape(ctx.params), scale=50.0, dtype=ctx.torch.float8_e4m3fn)


def _int8_garbage(ctx: InputContext):  # noqa: ANN202
    return ctx.randint(*_shape(ctx.params), low=-128, high=128, dtype=ctx.torch.int8)


def _scales_garbage(ctx: InputContext):  # noqa: ANN202
    return ctx.randn(_token_rows(ctx.params), 1, scale=100.0, dtype=ctx.torch.float32)


# -- fp8 --------------------------------------------------------------------------------------
def _static_fp8_reference(out, input, scale):  # noqa: ANN001, ANN202, A002
    import torch

    out.copy_(_quant.to_fp8(input.float() * torch.reciprocal(scale.float())))


def _static_fp8_inputs(ctx: InputContext) -> list[Any]:
    # About max|x| / 448 for these inputs, so that some values saturate at +-448.
    scale = ctx.uniform(1, low=0.012, high=0.02, dtype=ctx.torch.float32)
    return [_fp8_garbage(ctx), _x(ctx), scale]


def _dynamic_fp8_reference(out, input, scale):  # noqa: ANN001, ANN202, A002
    import torch

    x = input.float()
    scale.copy_((x.abs().amax() / _quant.FP8_MAX).reshape(scale.shape))
    out.copy_(_quant.to_fp8(x * torch.reciprocal(scale)))


def _dynamic_fp8_inputs(ctx: InputContext) -> list[Any]:
    return [_fp8_garbage(ctx), _x(ctx), ctx.randn(1, scale=100.0, dtype=ctx.torch.float32)]


def _per_token_fp8_reference(out, input, scales, scale_ub):  # noqa: ANN001, ANN202, A002
    import torch

    x = input.float().reshape(-1, input.shape[-1])
    absmax = x.abs().amax(dim=-1, keepdim=True)
    if scale_ub is not None:
        absmax = torch.minimum(absmax, scale_ub.float())
    scale = torch.clamp_min(absmax / _quant.FP8_MAX, _quant.FP8_MIN_SCALE)
    scales.copy_(scale.reshape(scales.shape))
    out.copy_(_quant.to_fp8(x / scale).reshape(out.shape))


def _per_token_fp8_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    x = _x(ctx)
    if p.get("zero_row") is not None:
        x.view(-1, p["hidden"])[p["zero_row"]] = 0  # the minimum scale, 1 / (448 * 512)
    scale_ub = (ctx.torch.tensor([p["scale_ub"]], dtype=ctx.torch.float32, device=ctx.device)
                if p.get("scale_ub") else None)
    return [_fp8_garbage(ctx), x, _scales_garbage(ctx), scale_ub]


PER_TOKEN_CASES = (
    ShapeCase("odd_tokens", {"tokens": 7, "hidden": 129}),
    ShapeCase("scale_ub_zero_row", {"tokens": 5, "hidden": 1100, "scale_ub": 3.0,
                                    "zero_row": 1}),
    ShapeCase("batched_3d", {"tokens": 6, "hidden": 200, "batch": 2}),
    ShapeCase("heldout_rows", {"tokens": 4, "hidden": 333, "scale_ub": 2.5}, heldout=True),
    ShapeCase("llama3_8b_prefill", {"tokens": 4096, "hidden": 4096}, tier=LARGE),
    ShapeCase("deepseek_v3_decode", {"tokens": 64, "hidden": 7168}, tier=LARGE),
)


def _compare_fp8_out(scale_index: int | None):  # noqa: ANN202
    def compared(returned: Any, args: Sequence[Any]) -> Any:
        values: list[Any] = [_quant.quantized_values(args[0])]
        if scale_index is not None:
            values.append(WithTolerance(args[scale_index], _quant.SCALE_FP32))
        return values

    return compared


# -- int8 -------------------------------------------------------------------------------------
def _static_int8_reference(out, input, scale, azp):  # noqa: ANN001, ANN202, A002
    import torch

    x = input.float()
    if azp is None:
        out.copy_(_quant.to_int8(x / scale.float()))
    else:
        rounded = torch.round(x * torch.reciprocal(scale.float()))
        out.copy_((rounded + azp.float()).clamp(-128.0, 127.0).to(torch.int8))


def _static_int8_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    if p.get("power_of_two_scale"):
        # x / 2^-5 is exact in any division mode, and fp16 inputs then land on .5 ties
        # often: the tie rule (half to even) is checked exactly.
        scale = torch.tensor([2.0 ** -5], dtype=torch.float32, device=ctx.device)
        x = _x(ctx, scale=1.5)
    else:
        scale = ctx.uniform(1, low=0.03, high=0.05, dtype=torch.float32)
        x = _x(ctx)
    azp = (torch.tensor([p["azp"]], dtype=torch.int32, device=ctx.device)
           if p.get("azp") is not None else None)
    return [_int8_garbage(ctx), x, scale, azp]


def _compare_static_int8(returned: Any, args: Sequence[Any]) -> Any:
    # x / scale is exact when scale is a power of two (and x * (1/scale) too), so two correct
    # kernels agree exactly; otherwise one step, for an fp32 quotient an ulp across a .5.
    exact = args[3] is None and _quant.is_power_of_two(float(args[2].reshape(-1)[0]))
    return [_quant.quantized_values(args[0], _quant.EXACT if exact else None)]


STATIC_INT8_CASES = (
    ShapeCase("ties_power_of_two_scale", {"tokens": 7, "hidden": 129,
                                          "power_of_two_scale": True}),
    ShapeCase("calibrated_scale", {"tokens": 6, "hidden": 200, "batch": 2}),
    ShapeCase("azp", {"tokens": 5, "hidden": 1100, "azp": 17}),
    ShapeCase("ties_long_row", {"tokens": 3, "hidden": 2053, "power_of_two_scale": True}),
    ShapeCase("heldout_azp", {"tokens": 4, "hidden": 333, "azp": -9}, heldout=True),
    ShapeCase("llama3_8b_prefill", {"tokens": 4096, "hidden": 4096}, tier=LARGE),
    ShapeCase("qwen2_7b_mlp", {"tokens": 1024, "hidden": 18944, "azp": 3}, tier=LARGE),
)


def _dynamic_int8_reference(out, input, scales, azp):  # noqa: ANN001, ANN202, A002
    import torch

    x = input.float().reshape(-1, input.shape[-1])
    if azp is None:
        absmax = x.abs().amax(dim=-1, keepdim=True)
        scales.copy_((absmax / _quant.INT8_MAX).reshape(scales.shape))
        multiplier = torch.where(absmax == 0, torch.zeros_like(absmax), _quant.INT8_MAX / absmax)
        out.copy_(_quant.to_int8(x * multiplier).reshape(out.shape))
        return
    top = x.amax(dim=-1, keepdim=True)
    bottom = x.amin(dim=-1, keepdim=True)
    scale = (top - bottom) / 255.0
    zero_point = torch.round(-128.0 - bottom / scale)
    scales.copy_(scale.reshape(scales.shape))
    azp.copy_(zero_point.to(torch.int32).reshape(azp.shape))
    rounded = torch.round(x * torch.reciprocal(scale))
    out.copy_((rounded + zero_point).clamp(-128.0, 127.0).to(torch.int8).reshape(out.shape))


def _dynamic_int8_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    x = _x(ctx)
    if p.get("asymmetric"):
        x = x + 0.7  # an off-centre range, so the zero point is not trivially 0
    azp = (ctx.randint(_token_rows(p), 1, low=-1000, high=1000, dtype=ctx.torch.int32)
           if p.get("asymmetric") else None)
    return [_int8_garbage(ctx), x, _scales_garbage(ctx), azp]


def _compare_dynamic_int8(returned: Any, args: Sequence[Any]) -> Any:
    values: list[Any] = [_quant.quantized_values(args[0]),
                         WithTolerance(args[2], _quant.SCALE_FP32)]
    if args[3] is not None:
        # min / s rounded to the zero point: one step where the quotient sits at a .5.
        values.append(WithTolerance(args[3].float(), _quant.ONE_INT8_STEP))
    return values


DYNAMIC_INT8_CASES = (
    ShapeCase("odd_tokens", {"tokens": 7, "hidden": 129}),
    ShapeCase("asymmetric", {"tokens": 5, "hidden": 1100, "asymmetric": True}),
    ShapeCase("batched_3d", {"tokens": 6, "hidden": 200, "batch": 2}),
    ShapeCase("heldout_asymmetric", {"tokens": 4, "hidden": 333, "asymmetric": True},
              heldout=True),
    ShapeCase("llama3_8b_prefill", {"tokens": 4096, "hidden": 4096}, tier=LARGE),
    ShapeCase("deepseek_asymmetric", {"tokens": 256, "hidden": 7168, "asymmetric": True},
              tier=LARGE),
)


# -- per-token-group fp8 ----------------------------------------------------------------------
def _group_reference(input, output_q, output_s, group_size, eps, fp8_min, fp8_max,  # noqa: ANN001
                     scale_ue8m0):  # noqa: ANN001, ANN202, A002
    import torch

    rows = input.numel() // input.shape[-1]
    groups = input.float().reshape(rows, -1, group_size)
    absmax = torch.clamp_min(groups.abs().amax(dim=-1, keepdim=True), eps)
    y_s = absmax / fp8_max
    if scale_ue8m0:
        y_s = torch.exp2(torch.ceil(torch.log2(torch.clamp_min(y_s.abs(), 1e-10))))
    q = torch.clamp(groups / y_s, fp8_min, fp8_max)
    output_q.copy_(q.to(torch.float8_e4m3fn).reshape(output_q.shape))
    output_s.copy_(y_s.reshape(output_s.shape))


def _group_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    rows, hidden, group = p["tokens"], p["hidden"], p["group_size"]
    x = ctx.randn(rows, hidden, scale=2.0)
    if p.get("small_group") is not None:
        x[0, :group] *= 1e-12  # absmax below eps: the scale is eps / 448
    output_q = ctx.randn(rows, hidden, scale=50.0, dtype=torch.float8_e4m3fn)
    groups = hidden // group
    if p.get("column_major"):
        # vLLM's column_major_scales: a [groups, tokens] buffer seen as [tokens, groups].
        output_s = ctx.randn(groups, rows, scale=100.0, dtype=torch.float32).t()
    else:
        output_s = ctx.randn(rows, groups, scale=100.0, dtype=torch.float32)
    finfo = torch.finfo(torch.float8_e4m3fn)
    return [x, output_q, output_s, group, 1e-10, float(finfo.min), float(finfo.max),
            bool(p.get("ue8m0", False))]


def _compare_group(returned: Any, args: Sequence[Any]) -> Any:
    return [_quant.quantized_values(args[1]), WithTolerance(args[2], _quant.SCALE_FP32)]


GROUP_CASES = (
    ShapeCase("odd_tokens", {"tokens": 3, "hidden": 384, "group_size": 128}),
    ShapeCase("column_major_scales", {"tokens": 3, "hidden": 512, "group_size": 128,
                                      "column_major": True}),
    ShapeCase("ue8m0_scales", {"tokens": 3, "hidden": 256, "group_size": 128, "ue8m0": True,
                               "small_group": True}),
    ShapeCase("group_64", {"tokens": 5, "hidden": 192, "group_size": 64}),
    ShapeCase("heldout_column_major", {"tokens": 3, "hidden": 640, "group_size": 128,
                                       "column_major": True}, heldout=True),
    ShapeCase("deepseek_v3_prefill", {"tokens": 4096, "hidden": 7168, "group_size": 128,
                                      "column_major": True}, tier=LARGE),
    ShapeCase("deepseek_v3_decode", {"tokens": 64, "hidden": 7168, "group_size": 128},
              tier=LARGE),
)


# -- kv-cache fp8 conversion ------------------------------------------------------------------
def _convert_reference(dst_cache, src_cache, scale, kv_cache_dtype):  # noqa: ANN001, ANN202
    import torch

    scale32 = torch.tensor(scale, dtype=torch.float32)
    if dst_cache.dtype == torch.uint8:
        q = _quant.to_fp8(src_cache.float() / scale32)
        dst_cache.copy_(q.view(torch.uint8))
    else:
        values = src_cache.view(torch.float8_e4m3fn).float() * scale32
        dst_cache.copy_(values.to(dst_cache.dtype))


def _convert_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    shape = (p["blocks"], p["block_size"], p["kv_heads"], p["head_size"])
    scale = float(p["scale"])
    if p["direction"] == "quantize":
        src = ctx.randn(*shape, scale=3.0)
        dst = ctx.randint(*shape, low=0, high=256, dtype=torch.uint8)
    else:
        # Valid e4m3 bytes (no NaN codes), as a quantised cache holds.
        src = ctx.randn(*shape, scale=60.0).float().clamp(-448, 448).to(
            torch.float8_e4m3fn).view(torch.uint8)
        dst = ctx.randn(*shape, scale=1000.0)
    return [dst, src, scale, p.get("kv_cache_dtype", "fp8")]


def _compare_convert(returned: Any, args: Sequence[Any]) -> Any:
    import torch

    dst = args[0]
    if dst.dtype == torch.uint8:
        return [_quant.quantized_values(dst.view(torch.float8_e4m3fn))]
    return [dst]


CONVERT_CASES = (
    ShapeCase("quantize_odd", {"direction": "quantize", "blocks": 3, "block_size": 16,
                               "kv_heads": 2, "head_size": 40, "scale": 0.011}),
    ShapeCase("dequantize_odd", {"direction": "dequantize", "blocks": 5, "block_size": 16,
                                 "kv_heads": 1, "head_size": 72, "scale": 0.037}),
    ShapeCase("quantize_e4m3_name", {"direction": "quantize", "blocks": 2, "block_size": 16,
                                     "kv_heads": 3, "head_size": 64, "scale": 0.5,
                                     "kv_cache_dtype": "fp8_e4m3"}),
    ShapeCase("heldout_dequantize", {"direction": "dequantize", "blocks": 4, "block_size": 8,
                                     "kv_heads": 2, "head_size": 56, "scale": 0.21},
              heldout=True),
    ShapeCase("llama3_8b_quantize", {"direction": "quantize", "blocks": 2048,
                                     "block_size": 16, "kv_heads": 8, "head_size": 128,
                                     "scale": 0.02}, tier=LARGE),
    ShapeCase("llama3_8b_dequantize", {"direction": "dequantize", "blocks": 2048,
                                       "block_size": 16, "kv_heads": 8, "head_size": 128,
                                       "scale": 0.02}, tier=LARGE),
)


def _cache_elements(p: Mapping[str, Any]) -> int:
    return p["blocks"] * p["block_size"] * p["kv_heads"] * p["head_size"]


def operators() -> list[OperatorSpec]:
    fp8 = _quant.FP8_RULE
    layout = ("input [..., hidden] (float32, float16 or bfloat16; 2-D or 3-D, contiguous), out "
              "of input's shape")
    return [
        vllm_op(
            "static_scaled_fp8_quant",
            signature="kernel(out: Tensor, input: Tensor, scale: Tensor) -> None",
            description=(
                f"vLLM's static_scaled_fp8_quant (scaled_fp8_quant with a given scale): {layout} "
                "and dtype torch.float8_e4m3fn, scale float32 [1]. Writes out = fp8(input * "
                "(1 / scale[0])), where 1 / scale[0] is computed once in float32 (vLLM "
                "multiplies by the inverted scale). " + fp8 + " Returns None; input and scale "
                "must be left unchanged."),
            reference=_static_fp8_reference, make_inputs=_static_fp8_inputs, cases=TOKEN_CASES,
            flops=lambda p: 2 * _elements(p), bytes_moved=_bytes,
            tags=("quant", "out_param"), mutated_args=(0,), compared=_compare_fp8_out(None),
            vllm_callable="torch.ops._C.static_scaled_fp8_quant",
        ),
        vllm_op(
            "dynamic_scaled_fp8_quant",
            signature="kernel(out: Tensor, input: Tensor, scale: Tensor) -> None",
            description=(
                f"vLLM's dynamic_scaled_fp8_quant (scaled_fp8_quant without a scale, per "
                f"tensor): {layout} and dtype torch.float8_e4m3fn, scale a float32 [1] "
                "out-parameter. Writes scale[0] = max |input| / 448 over the whole tensor, then "
                "out = fp8(input * (1 / scale[0])), 1 / scale[0] computed once in float32. "
                + fp8 + " scale is compared at float32 tolerance. Returns None; input must be "
                "left unchanged."),
            reference=_dynamic_fp8_reference, make_inputs=_dynamic_fp8_inputs,
            cases=DYNAMIC_FP8_CASES,
            flops=lambda p: 3 * _elements(p), bytes_moved=_bytes,
            tags=("quant", "out_param"), mutated_args=(0, 2), compared=_compare_fp8_out(2),
            vllm_callable="torch.ops._C.dynamic_scaled_fp8_quant",
        ),
        vllm_op(
            "dynamic_per_token_scaled_fp8_quant",
            signature="kernel(out: Tensor, input: Tensor, scales: Tensor, "
                      "scale_ub: Tensor | None) -> None",
            description=(
                f"vLLM's dynamic_per_token_scaled_fp8_quant (scaled_fp8_quant with "
                f"use_per_token_if_dynamic): {layout} and dtype torch.float8_e4m3fn, scales a "
                "float32 out-parameter [num_tokens, 1] (num_tokens = input.numel() / hidden). "
                "Per token (row of the last dim): scale = max(min(max |x|, scale_ub[0]) / 448, "
                "1 / (448 * 512)), the min only when scale_ub (float32 [1]) is given, written "
                "to scales[token, 0]; out = fp8(x / scale) (a division, not a multiplication "
                "by an inverse). " + fp8 + " scales are compared at float32 tolerance. Returns "
                "None; input and scale_ub must be left unchanged."),
            reference=_per_token_fp8_reference, make_inputs=_per_token_fp8_inputs,
            cases=PER_TOKEN_CASES,
            flops=lambda p: 3 * _elements(p), bytes_moved=_bytes,
            tags=("quant", "out_param"), mutated_args=(0, 2), compared=_compare_fp8_out(2),
            vllm_callable="torch.ops._C.dynamic_per_token_scaled_fp8_quant",
        ),
        vllm_op(
            "static_scaled_int8_quant",
            signature="kernel(out: Tensor, input: Tensor, scale: Tensor, "
                      "azp: Tensor | None) -> None",
            description=(
                f"vLLM's static_scaled_int8_quant (scaled_int8_quant with a given scale): "
                f"{layout} and dtype torch.int8, scale float32 [1], azp None or an int32 [1] "
                "zero point. Without azp: out = saturate(round(input / scale[0])) (a division). "
                "With azp: out = saturate(round(input * (1 / scale[0])) + azp[0]), 1 / scale "
                "computed once in float32, the zero point added after rounding. "
                + _quant.INT8_RULE + " out is compared exactly where scale is a power of two "
                "(the quotient is then exact, and ties are frequent), else within one step "
                "(two correct kernels' fp32 quotients may lie an ulp apart across a .5). "
                "Returns None; input, scale and azp must be left unchanged."),
            reference=_static_int8_reference, make_inputs=_static_int8_inputs,
            cases=STATIC_INT8_CASES,
            flops=lambda p: 2 * _elements(p), bytes_moved=_bytes,
            tags=("quant", "out_param"), mutated_args=(0,), compared=_compare_static_int8,
            vllm_callable="torch.ops._C.static_scaled_int8_quant",
        ),
        vllm_op(
            "dynamic_scaled_int8_quant",
            signature="kernel(out: Tensor, input: Tensor, scales: Tensor, "
                      "azp: Tensor | None) -> None",
            description=(
                f"vLLM's dynamic_scaled_int8_quant (scaled_int8_quant without a scale), per "
                f"token: {layout} and dtype torch.int8, scales a float32 out-parameter "
                "[num_tokens, 1], azp None (symmetric) or an int32 out-parameter [num_tokens, "
                "1] (asymmetric). Symmetric: scales[t] = max |x| / 127 and out = "
                "saturate(round(x * (127 / max |x|))), 0 where max |x| is 0. Asymmetric: s = "
                "(max x - min x) / 255, zp = round(-128 - min x / s), scales[t] = s, azp[t] = "
                "zp, out = saturate(round(x * (1 / s)) + zp) (1 / s once in float32). "
                + _quant.INT8_RULE + " out and azp are compared within one step, scales at "
                "float32 tolerance. Returns None; input must be left unchanged."),
            reference=_dynamic_int8_reference, make_inputs=_dynamic_int8_inputs,
            cases=DYNAMIC_INT8_CASES,
            flops=lambda p: 3 * _elements(p), bytes_moved=_bytes,
            tags=("quant", "out_param"), mutated_args=(0, 2, 3),
            compared=_compare_dynamic_int8,
            vllm_callable="torch.ops._C.dynamic_scaled_int8_quant",
        ),
        vllm_op(
            "per_token_group_fp8_quant",
            signature="kernel(input: Tensor, output_q: Tensor, output_s: Tensor, "
                      "group_size: int, eps: float, fp8_min: float, fp8_max: float, "
                      "scale_ue8m0: bool) -> None",
            description=(
                "vLLM's per_token_group_fp8_quant (under per_token_group_quant_fp8, "
                "DeepSeek-style block quantisation): input [num_tokens, hidden] (float32, "
                "float16 or bfloat16, contiguous), hidden a multiple of group_size (128 or 64). "
                "Each row is cut into groups of group_size consecutive columns; per group, y_s "
                "= max(eps, max |x|) / fp8_max, and when scale_ue8m0, y_s = 2^ceil(log2(max(y_s, "
                "1e-10))) (a power of two). Writes output_s[token, group] = y_s into the "
                "float32 out-parameter output_s of shape [num_tokens, hidden / group_size], "
                "which may be column-major (a transposed [groups, tokens] buffer: honour its "
                "strides), and output_q [num_tokens, hidden] (torch.float8_e4m3fn) = "
                "fp8(clamp(x / y_s, fp8_min, fp8_max)) (a division). fp8_min/fp8_max are "
                "-448/448. " + fp8 + " Scales are compared at float32 tolerance. Returns None; "
                "input must be left unchanged."),
            reference=_group_reference, make_inputs=_group_inputs, cases=GROUP_CASES,
            flops=lambda p: 3 * p["tokens"] * p["hidden"],
            bytes_moved=lambda p, size: p["tokens"] * p["hidden"] * (size + 1)
            + 4 * p["tokens"] * p["hidden"] // p["group_size"],
            tags=("quant", "out_param"), mutated_args=(1, 2), compared=_compare_group,
            vllm_callable="torch.ops._C.per_token_group_fp8_quant",
        ),
        vllm_op(
            "convert_fp8",
            signature="kernel(dst_cache: Tensor, src_cache: Tensor, scale: float, "
                      "kv_cache_dtype: str) -> None",
            description=(
                "vLLM's convert_fp8 for an fp8 kv cache (kv_cache_dtype 'fp8' or 'fp8_e4m3', "
                "both e4m3), elementwise over caches of shape [num_blocks, block_size, "
                "num_kv_heads, head_size]. vLLM keeps fp8 caches as torch.uint8 tensors holding "
                "e4m3 bytes. If dst_cache is uint8 (quantise): src_cache is float32/float16/"
                "bfloat16 and dst byte = the e4m3 bits of clamp(x / scale, -448, 448) (x / "
                "scale in float32, the conversion saturating). Else (dequantise): src_cache is "
                "uint8 e4m3 bytes and dst_cache (float32/float16/bfloat16) = float(e4m3) * "
                "scale, rounded to dst's dtype. " + fp8 + " Quantised bytes are compared as "
                "e4m3 values within one step, dequantised values at the dtype's tolerance. "
                "Returns None; src_cache must be left unchanged."),
            reference=_convert_reference, make_inputs=_convert_inputs, cases=CONVERT_CASES,
            flops=lambda p: _cache_elements(p),
            bytes_moved=lambda p, size: _cache_elements(p) * (size + 1),
            tags=("quant", "kv_cache", "out_param"), mutated_args=(0,),
            compared=_compare_convert,
            vllm_callable="vllm._custom_ops.convert_fp8",
        ),
    ]
