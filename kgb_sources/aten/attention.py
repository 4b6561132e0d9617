"""Attention: F.scaled_dot_product_attention on (B, H, L, D) tensors, without a mask or
dropout, causal or not.

Small cases have lengths no block divides, Lq != Lk (non-causal), a head dim that is no power
of two, a value dim unlike the key dim, an explicit scale, and q/k/v as (B, L, H, D)-stored
views (as projections produce them), so that a kernel must use strides. Each output averages
Lk values, which is ``reduce_dim`` (the atol of fp16 and bf16 cases, widened there by flash
attention's rounding of the probabilities to the dtype); fp32 cases are held to attention's
rounding bound (kgb_core/evaluation/attention_bound.py has both).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase, Tolerance

from kgb_sources.aten._build import aten_op


def attention_bound(inputs: Sequence[Any], tolerance: Tolerance) -> Any:
    """kgb_core.evaluation.attention_bound's rule, imported when a case is judged: that module
    imports torch, and building the operator list must not (operators.py), or `kgb ops` and
    every listing pays torch's import, about 1.3 s of its 2 s."""
    from kgb_core.evaluation import attention_bound as rule

    return rule.attention_bound(inputs, tolerance)


# Where the rule lives, as `kgb ops show` cites it for the fp32 bound (OperatorSpec.describe).
attention_bound.__module__ = "kgb_core.evaluation.attention_bound"

# "batch", "heads", "lq", "lk", "d" (q/k head dim), "dv" (v head dim, default d); "is_causal";
# "scale" (None: 1/sqrt(d)); "bshd" stores q, k, v as (B, L, H, D) and passes permuted views.
SDPA_CASES = (
    ShapeCase("cross_lq37_lk53", {"batch": 1, "heads": 2, "lq": 37, "lk": 53, "d": 32,
                                  "is_causal": False, "scale": None}),
    ShapeCase("causal_45", {"batch": 2, "heads": 2, "lq": 45, "lk": 45, "d": 16,
                            "is_causal": True, "scale": None}),
    ShapeCase("causal_head_dim_24", {"batch": 1, "heads": 3, "lq": 33, "lk": 33, "d": 24,
                                     "is_causal": True, "scale": None}),
    ShapeCase("scaled_dv24_bshd", {"batch": 2, "heads": 1, "lq": 19, "lk": 70, "d": 40, "dv": 24,
                                   "is_causal": False, "scale": 0.3, "bshd": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_causal_bshd", {"batch": 1, "heads": 2, "lq": 50, "lk": 50, "d": 64,
                                      "is_causal": True, "scale": None, "bshd": True},
              heldout=True),
    ShapeCase("llama_prefill_causal", {"batch": 8, "heads": 32, "lq": 2048, "lk": 2048,
                                       "d": 128, "is_causal": True, "scale": None}, tier=LARGE),
    ShapeCase("encoder_full", {"batch": 8, "heads": 32, "lq": 2048, "lk": 2048, "d": 128,
                               "is_causal": False, "scale": None}, tier=LARGE),
    ShapeCase("decode_lk4096", {"batch": 32, "heads": 32, "lq": 1, "lk": 4096, "d": 128,
                                "is_causal": False, "scale": None}, tier=LARGE),
)


def _dv(p: Mapping[str, Any]) -> int:
    return p.get("dv", p["d"])


def _heads_tensor(ctx: InputContext, length: int, dim: int) -> Any:
    p = ctx.params
    if p.get("bshd"):
        return ctx.randn(p["batch"], length, p["heads"], dim).transpose(1, 2)
    return ctx.randn(p["batch"], p["heads"], length, dim)


def _sdpa_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    q = _heads_tensor(ctx, p["lq"], p["d"])
    k = _heads_tensor(ctx, p["lk"], p["d"])
    v = _heads_tensor(ctx, p["lk"], _dv(p))
    return [q, k, v, bool(p["is_causal"]), p["scale"]]


def _sdpa_reference(q, k, v, is_causal, scale):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
                                          is_causal=is_causal, scale=scale)


def _score_pairs(p: Mapping[str, Any]) -> float:
    """(query, key) pairs computed; about half of them under a causal mask."""
    pairs = p["batch"] * p["heads"] * p["lq"] * p["lk"]
    return pairs / 2 if p["is_causal"] else pairs


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "scaled_dot_product_attention",
            signature="kernel(q: Tensor, k: Tensor, v: Tensor, is_causal: bool, "
                      "scale: float | None) -> Tensor",
            description="F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, "
                        "is_causal=is_causal, scale=scale) for q (B, H, Lq, D), k (B, H, Lk, D) "
                        "and v (B, H, Lk, Dv): out = softmax(q @ k^T * scale, dim=-1) @ v, a "
                        "contiguous (B, H, Lq, Dv) tensor of q's dtype. scale None means "
                        "1 / sqrt(D). With is_causal, query i attends to keys j <= i only (the "
                        "top-left aligned lower triangle; causal cases have Lq == Lk). q, k, v "
                        "may be non-contiguous views (e.g. (B, L, H, D) storage transposed). "
                        "Compute the softmax and the products in float32 (no TF32); for "
                        "fp16/bf16 inputs the probabilities may be rounded to that dtype "
                        "before the product with v, as flash attention does.",
            reference=_sdpa_reference,
            make_inputs=_sdpa_inputs,
            cases=SDPA_CASES,
            # q @ k^T, the softmax (about 4 ops a score), p @ v.
            flops=lambda p: _score_pairs(p) * (2 * p["d"] + 4 + 2 * _dv(p)),
            bytes_moved=lambda p, size: p["batch"] * p["heads"] * (
                (p["lq"] + p["lk"]) * p["d"] + p["lk"] * _dv(p) + p["lq"] * _dv(p)) * size,
            tags=("attention", "softmax", "fused"),
            reduce_dim=lambda p: p["lk"],
            # fp32: attention's own rounding bound against a float64 reference, which a kernel
            # computing from fp16- or TF32-rounded inputs fails (the flat atol let it pass).
            rounding_bound=attention_bound,
        ),
    ]
