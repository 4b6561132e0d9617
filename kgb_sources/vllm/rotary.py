"""vLLM's rotary_embedding (csrc/pos_encoding_kernels.cu), in place on query and key.

vLLM's kernel computes in the storage dtype: ``arr[x] * cos - arr[y] * sin`` with scalar_t
operands, so each product and the difference are rounded to fp16/bf16 (c10::Half arithmetic);
the reference does the same. A kernel that computes in fp32 and rounds once differs by up to
about one unit in the last place of the largest product, which the fp16/bf16 tolerances allow.
"""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase, Tolerance

from kgb_sources.vllm._build import vllm_op

ROTARY_CASES = (
    ShapeCase("neox_3d", {"tokens": 7, "q_heads": 4, "kv_heads": 2, "head_size": 64,
                          "rot_dim": 64, "is_neox": True, "max_position": 64}),
    ShapeCase("gptj_flat", {"tokens": 5, "q_heads": 3, "kv_heads": 1, "head_size": 32,
                            "rot_dim": 32, "is_neox": False, "max_position": 40,
                            "flat": True}),
    ShapeCase("neox_partial_rotary", {"tokens": 6, "q_heads": 2, "kv_heads": 2,
                                      "head_size": 80, "rot_dim": 32, "is_neox": True,
                                      "max_position": 50}),
    ShapeCase("gptj_no_key", {"tokens": 4, "q_heads": 4, "kv_heads": 0, "head_size": 64,
                              "rot_dim": 64, "is_neox": False, "max_position": 32}),
    ShapeCase("heldout_heads", {"tokens": 3, "q_heads": 5, "kv_heads": 1, "head_size": 96,
                                "rot_dim": 48, "is_neox": False, "max_position": 30},
              heldout=True),
    ShapeCase("llama3_8b_prefill", {"tokens": 4096, "q_heads": 32, "kv_heads": 8,
                                    "head_size": 128, "rot_dim": 128, "is_neox": True,
                                    "max_position": 8192}, tier=LARGE),
    ShapeCase("qwen2_decode_batch", {"tokens": 256, "q_heads": 28, "kv_heads": 4,
                                     "head_size": 128, "rot_dim": 128, "is_neox": True,
                                     "max_position": 32768}, tier=LARGE),
)


def _cos_sin_cache(ctx: InputContext, rot_dim: int, max_position: int, base: float = 10000.0,  # noqa: ANN202
                   dtype=None):  # noqa: ANN001
    torch = ctx.torch
    inv_freq = 1.0 / (base ** (torch.arange(0, rot_dim, 2, dtype=torch.float32) / rot_dim))
    freqs = torch.outer(torch.arange(max_position, dtype=torch.float32), inv_freq)
    cache = torch.cat([freqs.cos(), freqs.sin()], dim=-1)
    return cache.to(dtype or ctx.dtype).to(ctx.device)


def _inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    t, d = p["tokens"], p["head_size"]
    positions = ctx.randint(t, low=0, high=p["max_position"])

    def heads(count: int):  # noqa: ANN202
        shape = (t, count * d) if p.get("flat") else (t, count, d)
        return ctx.randn(*shape)

    query = heads(p["q_heads"])
    key = heads(p["kv_heads"]) if p["kv_heads"] else None
    return [positions, query, key, d, _cos_sin_cache(ctx, p["rot_dim"], p["max_position"]),
            bool(p["is_neox"])]


def _rotate(arr, positions, head_size, cache, is_neox):  # noqa: ANN001, ANN202
    tokens = positions.numel()
    heads = arr.view(tokens, -1, head_size)
    rot_dim = cache.shape[-1]
    half = rot_dim // 2
    cos = cache[positions.long(), :half].float().unsqueeze(1)
    sin = cache[positions.long(), half:].float().unsqueeze(1)
    if is_neox:
        x_index = slice(0, half)
        y_index = slice(half, rot_dim)
    else:
        x_index = slice(0, rot_dim, 2)
        y_index = slice(1, rot_dim, 2)
    x = heads[..., x_index].float()
    y = heads[..., y_index].float()
    dtype = arr.dtype

    def rounded(value):  # noqa: ANN001, ANN202 - one scalar_t operation's result
        return value.to(dtype).float()

    new_x = (rounded(x * cos) - rounded(y * sin)).to(dtype)
    new_y = (rounded(y * cos) + rounded(x * sin)).to(dtype)
    heads[..., x_index] = new_x
    heads[..., y_index] = new_y


def _reference(positions, query, key, head_size, cos_sin_cache, is_neox):  # noqa: ANN001, ANN202
    _rotate(query, positions, head_size, cos_sin_cache, is_neox)
    if key is not None:
        _rotate(key, positions, head_size, cos_sin_cache, is_neox)


def _elements(p: Mapping[str, Any]) -> int:
    return p["tokens"] * (p["q_heads"] + p["kv_heads"]) * p["head_size"]


def _rotated(p: Mapping[str, Any]) -> int:
    return p["tokens"] * (p["q_heads"] + p["kv_heads"]) * p["rot_dim"]


# -- fused_qk_norm_rope -----------------------------------------------------------------------
QK_NORM_ROPE_CASES = (
    ShapeCase("neox_fp32_cache", {"tokens": 5, "q_heads": 4, "k_heads": 2, "v_heads": 2,
                                  "head_dim": 64, "rot_dim": 64, "is_neox": True,
                                  "max_position": 64, "cache_fp32": True, "eps": 1e-6}),
    ShapeCase("gptj_d128", {"tokens": 3, "q_heads": 2, "k_heads": 1, "v_heads": 1,
                            "head_dim": 128, "rot_dim": 128, "is_neox": False,
                            "max_position": 40, "eps": 1e-6}),
    ShapeCase("neox_partial_rotary", {"tokens": 4, "q_heads": 2, "k_heads": 2, "v_heads": 2,
                                      "head_dim": 128, "rot_dim": 64, "is_neox": True,
                                      "max_position": 50, "eps": 1e-5}),
    ShapeCase("gptj_d256", {"tokens": 2, "q_heads": 2, "k_heads": 1, "v_heads": 1,
                            "head_dim": 256, "rot_dim": 256, "is_neox": False,
                            "max_position": 30, "cache_fp32": True, "eps": 1e-6}),
    ShapeCase("heldout_partial_gptj", {"tokens": 3, "q_heads": 3, "k_heads": 1, "v_heads": 1,
                                       "head_dim": 64, "rot_dim": 32, "is_neox": False,
                                       "max_position": 30, "eps": 1e-6}, heldout=True),
    ShapeCase("qwen3_8b_prefill", {"tokens": 4096, "q_heads": 32, "k_heads": 8, "v_heads": 8,
                                   "head_dim": 128, "rot_dim": 128, "is_neox": True,
                                   "max_position": 40960, "cache_fp32": True, "eps": 1e-6},
              tier=LARGE),
    ShapeCase("qwen3_moe_decode", {"tokens": 256, "q_heads": 32, "k_heads": 4, "v_heads": 4,
                                   "head_dim": 128, "rot_dim": 128, "is_neox": True,
                                   "max_position": 40960, "eps": 1e-6}, tier=LARGE),
)


def _qk_norm_rope_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    t, d = p["tokens"], p["head_dim"]
    heads = p["q_heads"] + p["k_heads"] + p["v_heads"]
    qkv = ctx.randn(t, heads * d, scale=2.0)
    q_weight = ctx.randn(d, scale=0.5, shift=1.0)
    k_weight = ctx.randn(d, scale=0.5, shift=1.0)
    cache = _cos_sin_cache(ctx, p["rot_dim"], p["max_position"],
                           dtype=ctx.torch.float32 if p.get("cache_fp32") else None)
    positions = ctx.randint(t, low=0, high=p["max_position"])
    return [qkv, int(p["q_heads"]), int(p["k_heads"]), int(p["v_heads"]), int(d),
            float(p["eps"]), q_weight, k_weight, cache, bool(p["is_neox"]), positions]


def _qk_norm_rope_reference(qkv, num_heads_q, num_heads_k, num_heads_v, head_dim, eps,  # noqa: ANN001, ANN202
                            q_weight, k_weight, cos_sin_cache, is_neox, position_ids):  # noqa: ANN001
    import torch

    tokens = qkv.shape[0]
    heads = qkv.view(tokens, num_heads_q + num_heads_k + num_heads_v, head_dim)
    qk = heads[:, :num_heads_q + num_heads_k].float()
    weight = torch.cat([q_weight.float().expand(num_heads_q, head_dim),
                        k_weight.float().expand(num_heads_k, head_dim)])
    rms = torch.rsqrt(qk.pow(2).mean(dim=-1, keepdim=True) + eps)
    normed = qk * (rms * weight)  # vLLM: elements[i] *= rms_rcp * weight, all in float32
    rot_dim = cos_sin_cache.shape[-1]
    half = rot_dim // 2
    cache = cos_sin_cache[position_ids.long()].float()
    cos, sin = cache[:, None, :half], cache[:, None, half:]
    if is_neox:
        x, y = normed[..., :half], normed[..., half:rot_dim]
    else:
        x, y = normed[..., 0:rot_dim:2], normed[..., 1:rot_dim:2]
    new_x = x * cos - y * sin
    new_y = x * sin + y * cos
    rotated = normed.clone()
    if is_neox:
        rotated[..., :half], rotated[..., half:rot_dim] = new_x, new_y
    else:
        rotated[..., 0:rot_dim:2], rotated[..., 1:rot_dim:2] = new_x, new_y
    heads[:, :num_heads_q + num_heads_k] = rotated.to(qkv.dtype)


def operators() -> list[OperatorSpec]:
    return [_fused_qk_norm_rope()] + [vllm_op(
        "rotary_embedding",
        signature="kernel(positions: Tensor, query: Tensor, key: Tensor | None, head_size: int, "
                  "cos_sin_cache: Tensor, is_neox: bool) -> None",
        description=(
            "vLLM's rotary_embedding, in place on query and key. positions: int64 "
            "[num_tokens], each in [0, max_position). query: [num_tokens, num_heads, head_size] "
            "or flattened [num_tokens, num_heads * head_size], contiguous; key the same with "
            "num_kv_heads heads, or None (then only query is rotated). cos_sin_cache: "
            "[max_position, rot_dim] of query's dtype, cos in columns [0, rot_dim/2) and sin in "
            "[rot_dim/2, rot_dim); rot_dim may be smaller than head_size, and entries "
            "[rot_dim, head_size) of each head must be left unchanged. For pair i in "
            "[0, rot_dim/2) of every head at position p = positions[token]: with c = "
            "cache[p, i], s = cache[p, rot_dim/2 + i], and (x, y) the elements at (i, "
            "rot_dim/2 + i) when is_neox (GPT-NeoX style) or at (2i, 2i + 1) otherwise "
            "(GPT-J style, interleaved): x <- x*c - y*s, y <- y*c + x*s, both from the old "
            "values. vLLM computes in the storage dtype (each product and the sum rounded to "
            "float16/bfloat16; float32 is exact). Returns None; positions and cos_sin_cache "
            "must be left unchanged."),
        reference=_reference, make_inputs=_inputs, cases=ROTARY_CASES,
        flops=lambda p: 3 * _rotated(p),
        bytes_moved=lambda p, size: 2 * _rotated(p) * size + p["tokens"] * (8 + p["rot_dim"] * size),
        tags=("rotary", "inplace"), mutated_args=(1, 2),
        # vLLM rounds each product to the storage dtype; |x*c| reaches about 4.5 for unit
        # normal inputs, whose half-ulp in fp16 is 2e-3 (bf16 1.6e-2), twice per output.
        tolerances={"float16": Tolerance(rtol=1e-3, atol=5e-3),
                             "bfloat16": Tolerance(rtol=1.6e-2, atol=4e-2)},
        vllm_callable="vllm._custom_ops.rotary_embedding",
    )]


def _fused_qk_norm_rope() -> OperatorSpec:
    def elements(p: Mapping[str, Any]) -> int:
        return p["tokens"] * (p["q_heads"] + p["k_heads"]) * p["head_dim"]

    return vllm_op(
        "fused_qk_norm_rope",
        signature="kernel(qkv: Tensor, num_heads_q: int, num_heads_k: int, num_heads_v: int, "
                  "head_dim: int, eps: float, q_weight: Tensor, k_weight: Tensor, "
                  "cos_sin_cache: Tensor, is_neox: bool, position_ids: Tensor) -> None",
        description=(
            "vLLM's fused_qk_norm_rope (csrc/fused_qknorm_rope_kernel.cu; Qwen3-style "
            "per-head QK-norm followed by RoPE), in place on qkv. qkv: [num_tokens, "
            "(num_heads_q + num_heads_k + num_heads_v) * head_dim], contiguous, float16 or "
            "bfloat16, each row the q heads, then the k heads, then the v heads; head_dim is "
            "64, 128 or 256. q_weight, k_weight: [head_dim] of qkv's dtype. cos_sin_cache: "
            "[max_position, rot_dim] (float32 or qkv's dtype), rot_dim even and <= head_dim, "
            "cos in columns [0, rot_dim/2), sin in [rot_dim/2, rot_dim). position_ids: int64 "
            "[num_tokens]. For every q and k head of token t, in float32: rms = 1 / sqrt("
            "mean(x^2) + eps) over the head's head_dim values; y = x * (rms * w) with w = "
            "q_weight for q heads and k_weight for k heads; then RoPE on the first rot_dim "
            "entries of y at position p = position_ids[t], with c = cache[p, i], s = cache[p, "
            "rot_dim/2 + i] and the pair (a, b) = (y[i], y[i + rot_dim/2]) when is_neox or "
            "(y[2i], y[2i + 1]) otherwise: a' = a*c - b*s, b' = a*s + b*c; entries [rot_dim, "
            "head_dim) keep y. The result is rounded to qkv's dtype once and written back. "
            "v heads must be left unchanged, as must the weights, the cache and "
            "position_ids. Returns None."),
        reference=_qk_norm_rope_reference, make_inputs=_qk_norm_rope_inputs,
        cases=QK_NORM_ROPE_CASES, dtypes=("float16", "bfloat16"),
        flops=lambda p: 8 * elements(p),
        bytes_moved=lambda p, size: 2 * elements(p) * size + p["tokens"] * (8 + p["rot_dim"] * 4),
        tags=("rotary", "norm", "inplace"), mutated_args=(0,),
        vllm_callable="vllm._custom_ops.fused_qk_norm_rope",
    )
