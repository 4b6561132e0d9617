"""Softmax-family ATen operators: softmax and log_softmax along any dim, computed in fp32."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, in_fp32, numel

# Small cases cover the last dim, a first and a middle dim (strided rows), a negative dim and a
# row longer than the interpreter's 1024-wide blocks, all at sizes no block divides.
SOFTMAX_CASES = (
    ShapeCase("last_dim_odd", {"shape": (37, 129), "dim": -1}),
    ShapeCase("first_dim", {"shape": (61, 33), "dim": 0}),
    ShapeCase("middle_dim_3d", {"shape": (5, 67, 9), "dim": -2}),
    ShapeCase("long_row", {"shape": (3, 2053), "dim": 1}),
    # Logits of scale 50 reach ~125, where exp overflows fp32 (above ~88.7): a kernel that does
    # not subtract the row maximum first returns NaN or inf there.
    ShapeCase("large_logits_first_dim", {"shape": (129, 23), "dim": 0, "scale": 50.0}),
    # A transposed view: a kernel that sizes its output like the input (empty_like keeps the
    # input's strides) and writes it as if contiguous is wrong here and only here.
    ShapeCase("transposed_input", {"shape": (40, 24), "dim": -1, "transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_first_dim_3d", {"shape": (23, 6, 11), "dim": 0}, heldout=True),
    ShapeCase("llm_vocab", {"shape": (4096, 32000), "dim": -1}, tier=LARGE),
    ShapeCase("attention_scores", {"shape": (4, 32, 1024, 1024), "dim": -1}, tier=LARGE),
)

# The shown small cases are softmax's; the held-out one is log_softmax's own.
LOG_SOFTMAX_CASES = SOFTMAX_CASES[:6] + (
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_first_dim_3d", {"shape": (19, 7, 13), "dim": 0}, heldout=True),
    ShapeCase("llm_vocab", {"shape": (4096, 32000), "dim": -1}, tier=LARGE),
    ShapeCase("llama3_vocab", {"shape": (1024, 128256), "dim": -1}, tier=LARGE),
)

# max, subtract, exp, sum, and a divide (softmax) or subtract (log_softmax) per element.
FLOPS_PER_ELEMENT = 5


def _softmax_length(p: Mapping[str, Any]) -> int:
    shape = tuple(p["shape"])
    return shape[p["dim"] % len(shape)]


def _log_softmax_atol_scale(p: Mapping[str, Any]) -> int:
    """log_softmax values grow like log(N), and so does a right kernel's rounding error.

    Scaling atol by N itself, as the published rule does for sums, would let an output off by
    half pass on a 32000-wide vocabulary (atol 3.2); log(N) keeps the check tight.
    """
    return max(1, math.ceil(math.log(_softmax_length(p))))


def _inputs(ctx: InputContext) -> list[Any]:
    # Logit-like spread (std 2): the outputs span several orders of magnitude.
    scale = float(ctx.params.get("scale", 2.0))
    shape = tuple(ctx.params["shape"])
    if ctx.params.get("transposed"):  # the (.., N, M) view of a tensor stored (.., M, N)
        stored = ctx.randn(*shape[:-2], shape[-1], shape[-2], scale=scale)
        return [stored.transpose(-1, -2), int(ctx.params["dim"])]
    return [ctx.randn(*shape, scale=scale), int(ctx.params["dim"])]


def _torch(name: str) -> Callable[[Any, int], Any]:
    def call(x, dim):  # noqa: ANN001, ANN202
        import torch

        return getattr(torch, name)(x, dim)

    call.__name__ = f"torch_{name}"
    return call


def _spec(name: str, description: str, cases: tuple[ShapeCase, ...],
          atol_scale: Callable[[Mapping[str, Any]], int] | None) -> OperatorSpec:
    return aten_op(
        name,
        signature="kernel(x: Tensor, dim: int) -> Tensor",
        description=description + " dim may be negative (counted from the end) and need not be "
                    "the last dim; the output has x's shape and dtype (float32, float16 or "
                    "bfloat16), and the math should be done in float32.",
        # fp32, rounded once: torch's CPU bf16 log_softmax rounds x - max to bf16 before
        # subtracting the log-sum, 9 bf16 steps off a right fp32 kernel near zero; the native
        # call stays the timing baseline.
        reference=in_fp32(_torch(name)),
        baseline=_torch(name),
        make_inputs=_inputs,
        cases=cases,
        flops=lambda p: FLOPS_PER_ELEMENT * numel(p["shape"]),
        bytes_moved=lambda p, size: 2 * numel(p["shape"]) * size,
        tags=("reduction", "softmax"),
        reduce_dim=atol_scale,
    )


def operators() -> list[OperatorSpec]:
    # softmax outputs lie in [0, 1] whatever the length, so its atol is not scaled by the
    # length (with 1e-4 x N an all-zero output would pass on a 32000-wide row).
    return [
        _spec("softmax", "torch.softmax(x, dim): exp(x - max) / sum(exp(x - max)) over dim.",
              SOFTMAX_CASES, atol_scale=None),
        _spec("log_softmax", "torch.log_softmax(x, dim): x - max - log(sum(exp(x - max))) over "
                             "dim.", LOG_SOFTMAX_CASES, atol_scale=_log_softmax_atol_scale),
    ]
