"""vLLM's activation ops (csrc/activation_kernels.cu): gated ``*_and_mul`` and elementwise GELUs.

Every op writes its out-parameter ``out`` and returns None, as ``torch.ops._C.<name>(out,
input[, threshold])`` does. Gated ops take input ``[..., 2d]`` (first half x, second half y) and
write out ``[..., d]``; vLLM's activation functions compute in fp32 and return the storage
dtype, so the activation is rounded to that dtype before the product, which is done in that
dtype (an fp32 product rounded once). The references do the same.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase, Tolerance

from kgb_sources.vllm._build import ROUNDED_INTERMEDIATE, from_template, vllm_op

# (tokens..., d): odd token counts and d no block divides, one d over the 1024-wide block.
GATED_CASES = (
    ShapeCase("odd_tokens", {"shape": (7, 129)}),
    ShapeCase("batched_3d", {"shape": (3, 5, 200)}),
    ShapeCase("wide_row", {"shape": (2, 1100)}),
    ShapeCase("one_token", {"shape": (1, 64)}),
    ShapeCase("heldout_rows", {"shape": (5, 333)}, heldout=True),
    ShapeCase("llama3_8b_mlp", {"shape": (4096, 14336)}, tier=LARGE),
    ShapeCase("qwen2_7b_decode", {"shape": (64, 18944)}, tier=LARGE),
)
ELEMENTWISE_CASES = (
    ShapeCase("odd_2d", {"shape": (7, 129)}),
    ShapeCase("batched_3d", {"shape": (3, 5, 200)}),
    ShapeCase("long_row", {"shape": (2, 1500)}),
    ShapeCase("heldout_rows", {"shape": (5, 333)}, heldout=True),
    ShapeCase("hidden_4096", {"shape": (4096, 4096)}, tier=LARGE),
)

SQRT1_2 = 1.0 / math.sqrt(2.0)
# vLLM's gelu_tanh BETA = M_SQRT2 * M_2_SQRTPI * 0.5 = sqrt(2 / pi); KAPPA = 0.044715.
TANH_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5


def _numel(shape) -> int:  # noqa: ANN001
    return math.prod(shape)


# -- torch activations (fp32 in, fp32 out) -------------------------------------------------
def _silu(a, threshold):  # noqa: ANN001, ANN202
    import torch

    return a / (1.0 + torch.exp(-a))


def _gelu(a, threshold):  # noqa: ANN001, ANN202
    import torch

    return a * 0.5 * (1.0 + torch.erf(a * SQRT1_2))


def _gelu_tanh(a, threshold):  # noqa: ANN001, ANN202
    import torch

    return 0.5 * a * (1.0 + torch.tanh(TANH_BETA * (a + 0.044715 * a * a * a)))


def _fatrelu(a, threshold):  # noqa: ANN001, ANN202
    import torch

    return torch.where(a > threshold, a, torch.zeros_like(a))


def _gelu_new(a):  # noqa: ANN001, ANN202
    import torch

    return 0.5 * a * (1.0 + torch.tanh(0.79788456 * (a + 0.044715 * a * a * a)))


def _gelu_fast(a):  # noqa: ANN001, ANN202
    import torch

    return 0.5 * a * (1.0 + torch.tanh(a * 0.79788456 * (1.0 + 0.044715 * a * a)))


def _gelu_quick(a):  # noqa: ANN001, ANN202
    import torch

    return a / (1.0 + torch.exp(-1.702 * a))


# Triton expressions of the same, on fp32 ``a`` (and ``threshold`` for fatrelu).
TRITON_GATED = {
    "silu": "a / (1.0 + tl.exp(-a))",
    "gelu": "a * 0.5 * (1.0 + tl.math.erf(a * 0.7071067811865476))",
    "gelu_tanh": f"0.5 * a * (1.0 + _tanh({TANH_BETA!r} * (a + 0.044715 * a * a * a)))",
    "fatrelu": "tl.where(a > threshold, a, 0.0)",
}
TRITON_ELEMENTWISE = {
    "gelu_new": "0.5 * a * (1.0 + _tanh(0.79788456 * (a + 0.044715 * a * a * a)))",
    "gelu_fast": "0.5 * a * (1.0 + _tanh(a * 0.79788456 * (1.0 + 0.044715 * a * a)))",
    "gelu_quick": "a / (1.0 + tl.exp(-1.702 * a))",
}


def _gated_reference(activation: Callable[..., Any], act_first: bool) -> Callable[..., None]:
    def reference(out, input, threshold=0.0):  # noqa: ANN001, A002
        d = input.shape[-1] // 2
        x, y = input[..., :d].float(), input[..., d:].float()
        a, other = (x, y) if act_first else (y, x)
        activated = activation(a, float(threshold)).to(input.dtype).float()
        out.copy_((activated * other).to(out.dtype))

    return reference


def _elementwise_reference(activation: Callable[..., Any]) -> Callable[..., None]:
    def reference(out, input):  # noqa: ANN001, A002
        out.copy_(activation(input.float()).to(out.dtype))

    return reference


def _swigluoai_reference(out, input, alpha, limit):  # noqa: ANN001, ANN202, A002
    import torch

    gate, up = input[..., 0::2].float(), input[..., 1::2].float()
    g = torch.clamp(gate, max=limit)
    u = torch.clamp(up, min=-limit, max=limit)
    out.copy_(((u + 1.0) * (g * torch.sigmoid(alpha * g))).to(out.dtype))


def _swigluoai_inputs(ctx: InputContext) -> list[Any]:
    *lead, d = ctx.params["shape"]
    # Scale 4: a good share of gates and ups lie beyond +-limit, so both clamps are exercised.
    return [ctx.randn(*lead, d, scale=1000.0), ctx.randn(*lead, 2 * d, scale=4.0),
            float(ctx.params.get("alpha", 1.702)), float(ctx.params.get("limit", 7.0))]


SWIGLUOAI_CASES = (
    ShapeCase("odd_tokens", {"shape": (7, 129)}),
    ShapeCase("tight_limit", {"shape": (3, 5, 200), "limit": 3.0, "alpha": 1.0}),
    ShapeCase("wide_row", {"shape": (2, 1100)}),
    ShapeCase("heldout_rows", {"shape": (5, 333), "limit": 5.0}, heldout=True),
    ShapeCase("gpt_oss_120b_experts", {"shape": (4096, 2880)}, tier=LARGE),
)


def _gated_inputs(with_threshold: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        *lead, d = ctx.params["shape"]
        # Garbage in out: an unwritten output cannot pass.
        inputs = [ctx.randn(*lead, d, scale=1000.0), ctx.randn(*lead, 2 * d, scale=2.0)]
        if with_threshold:
            inputs.append(float(ctx.params.get("threshold", 0.3)))
        return inputs

    return make


def _elementwise_inputs(ctx: InputContext) -> list[Any]:
    shape = ctx.params["shape"]
    return [ctx.randn(*shape, scale=1000.0), ctx.randn(*shape, scale=3.0)]


GATED = (
    # name, torch act, triton act, act on first half?, formula, flops per output element
    ("silu_and_mul", _silu, "silu", True, "silu(x) * y, silu(x) = x / (1 + exp(-x))", 5),
    ("mul_and_silu", _silu, "silu", False, "x * silu(y), silu(y) = y / (1 + exp(-y))", 5),
    ("gelu_and_mul", _gelu, "gelu", True,
     "gelu(x) * y with the exact erf GELU, gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2)))", 8),
    ("gelu_tanh_and_mul", _gelu_tanh, "gelu_tanh", True,
     "gelu_tanh(x) * y, gelu_tanh(x) = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))",
     10),
    ("fatrelu_and_mul", _fatrelu, "fatrelu", True,
     "fatrelu(x) * y, fatrelu(x) = x if x > threshold else 0 (strictly greater)", 2),
)

ELEMENTWISE = (
    ("gelu_new", _gelu_new, "0.5 * x * (1 + tanh(0.79788456 * (x + 0.044715 * x^3)))", 9),
    ("gelu_fast", _gelu_fast, "0.5 * x * (1 + tanh(x * 0.79788456 * (1 + 0.044715 * x^2)))", 9),
    ("gelu_quick", _gelu_quick, "x * sigmoid(1.702 * x) = x / (1 + exp(-1.702 x))", 4),
)

# gelu_new and gelu_fast run part of their arithmetic in the storage dtype in vLLM
# (``x * x * x`` and the tanh argument are c10::Half products), so vLLM's own fp16/bf16 outputs
# sit a few units in the last place from the fp32-once reference: the tolerance allows that.
_HALF_ARITHMETIC_TOLERANCE = {"float16": Tolerance(rtol=4e-3, atol=1e-3),
                              "bfloat16": Tolerance(rtol=3.2e-2, atol=8e-3)}


def operators() -> list[OperatorSpec]:
    specs = []
    for name, activation, triton_name, act_first, formula, flops in GATED:
        fatrelu = name == "fatrelu_and_mul"
        params = ("out: Tensor, input: Tensor, threshold: float" if fatrelu
                  else "out: Tensor, input: Tensor")
        specs.append(vllm_op(
            name,
            signature=f"kernel({params}) -> None",
            description=(
                f"vLLM's {name}: input has shape [..., 2*d]; its first half is x = "
                f"input[..., :d] and its second half y = input[..., d:]. Writes "
                f"out[..., :] = {formula} into the out-parameter out of shape [..., d] "
                f"(same dtype as input: float32, float16 or bfloat16) and returns None. "
                f"Compute the activation in float32, round it to the storage dtype, then "
                f"multiply in float32 and round once more, as vLLM's kernel does "
                f"(its activation returns the storage dtype). input"
                + (" and threshold" if fatrelu else "") + " must be left unchanged."),
            reference=_gated_reference(activation, act_first),
            make_inputs=_gated_inputs(fatrelu),
            cases=GATED_CASES,
            flops=lambda p, f=flops: f * _numel(p["shape"]),
            bytes_moved=lambda p, size: 3 * _numel(p["shape"]) * size,
            tags=("activation", "out_param"),
            mutated_args=(0,),
            tolerances=ROUNDED_INTERMEDIATE,
            reference_kernel=from_template(
                "_and_mul", name=name, formula=formula, act=TRITON_GATED[triton_name],
                act_first=str(act_first),
                params=("out: torch.Tensor, input: torch.Tensor, threshold: float" if fatrelu
                        else "out: torch.Tensor, input: torch.Tensor"),
                threshold="float(threshold)" if fatrelu else "0.0"),
            vllm_callable=f"torch.ops._C.{name}",
        ))
    specs.append(vllm_op(
        "swigluoai_and_mul",
        signature="kernel(out: Tensor, input: Tensor, alpha: float, limit: float) -> None",
        description=(
            "vLLM's swigluoai_and_mul (gpt-oss's clamped SwiGLU): input [..., 2*d] holds gate "
            "and up INTERLEAVED, gate = input[..., 0::2] and up = input[..., 1::2] (not split "
            "in halves). With g = min(gate, limit) (clamped from above only) and u = "
            "clamp(up, -limit, limit): out[..., :] = (u + 1) * g * sigmoid(alpha * g), "
            "computed in float32 and rounded once, written into the out-parameter out of shape "
            "[..., d] (input's dtype: float32, float16 or bfloat16). Returns None; input must "
            "be left unchanged. vLLM's defaults: alpha 1.702, limit 7.0."),
        reference=_swigluoai_reference, make_inputs=_swigluoai_inputs, cases=SWIGLUOAI_CASES,
        flops=lambda p: 8 * _numel(p["shape"]),
        bytes_moved=lambda p, size: 3 * _numel(p["shape"]) * size,
        tags=("activation", "out_param"), mutated_args=(0,),
        vllm_callable="torch.ops._C.swigluoai_and_mul",
    ))
    for name, activation, formula, flops in ELEMENTWISE:
        specs.append(vllm_op(
            name,
            signature="kernel(out: Tensor, input: Tensor) -> None",
            description=(
                f"vLLM's {name}: writes out = {formula} elementwise into the out-parameter "
                f"out (same shape and dtype as input: float32, float16 or bfloat16) and "
                f"returns None; input must be left unchanged. Compute in float32 and round "
                f"once to the storage dtype."),
            reference=_elementwise_reference(activation),
            make_inputs=_elementwise_inputs,
            cases=ELEMENTWISE_CASES,
            flops=lambda p, f=flops: f * _numel(p["shape"]),
            bytes_moved=lambda p, size: 2 * _numel(p["shape"]) * size,
            tags=("activation", "out_param"),
            mutated_args=(0,),
            tolerances=(_HALF_ARITHMETIC_TOLERANCE if name != "gelu_quick" else None),
            reference_kernel=from_template("_elementwise", name=name, formula=formula,
                                     act=TRITON_ELEMENTWISE[name]),
            vllm_callable=f"torch.ops._C.{name}",
        ))
    return specs
