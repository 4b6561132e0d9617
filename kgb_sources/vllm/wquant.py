"""vLLM's quantised-GEMM and weight-format ops: the CUTLASS w8a8 scaled GEMMs (int8 and fp8,
per-tensor / per-token / per-channel scales, and the asymmetric-activation azp variant), the
GPTQ and AWQ int4/int8 weight-only GEMMs on their published packed layouts, GPTQ's shuffle,
the Hadacore Hadamard transform and GGML block dequantisation.

Facts these rest on (vLLM 0.13; read, not copied):
- cutlass_scaled_mm (csrc/quantization/w8a8/cutlass, Epilogues.md): out = scale_a * (scale_b *
  float(acc)) [+ bias] with acc the int32 (int8) or float32 (fp8) accumulator of a @ b; a is
  row-major [M, K], b column-major [K, N]; scale_a has 1 or M entries, scale_b 1 or N; out is
  fp16/bf16. ScaledEpilogueBiasAzp(Token): out = scale_a * (scale_b * float(acc - azp_adj))
  + bias (per tensor, azp folded into azp_adj), or float(acc - azp[m] * azp_adj[n]) (per
  token), the correction computed in int32.
- gptq_gemm's non-exllama path (csrc/quantization/gptq/q_gemm.cu, reconstruct_gptq /
  gemm_half_q_half_alt): w[k, n] = half(q[k, n] - (z[g_idx[k], n] + 1)) * scale[g_idx[k], n]
  (the +1 is GPTQ v1's zero offset; v2 has none); q packed along K (bits 4j.. of
  b_q_weight[k / 8, n] for 4-bit), zeros packed along N.
- gptq_shuffle: rows reordered by q_perm (make_sequential_*), then each 4-bit word's nibbles
  permuted as shuffle_4bit_8 does (row 2i to nibble i, row 2i + 1 to nibble 4 + i); 8-bit
  words are not permuted.
- awq_gemm (csrc/quantization/awq, vllm/.../awq_triton.py): qweight [K, N / 8], qzeros [K / G,
  N / 8], scales [K / G, N]; column 8c + j of a word sits in nibble [0, 4, 1, 5, 2, 6, 3, 7][j]
  (AWQ's interleaved order); w = (q - z) * s in fp16.
- hadacore_transform (csrc/quantization/hadamard/hadacore): the Sylvester Hadamard transform
  of the last dim (a power of two <= 2^15), normalised (entries +-1/sqrt(n)), fp16/bf16.
- ggml_dequantize (csrc/quantization/gguf, ggml-common.h with GGML_CUDA_F16 undefined, so
  dfloat is float): GGML block formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, computed in float32 and
  converted once to the output dtype.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase, Tolerance

from kgb_sources.vllm import _quant
from kgb_sources.vllm._build import kernel_file, vllm_op

HALF_TYPES = ("float16", "bfloat16")


# == cutlass_scaled_mm / cutlass_scaled_mm_azp ================================================
def _operand_sigma(quant: str) -> float:
    return 73.0 if quant == "int8" else 8.0  # uniform int8 in [-127, 127]; fp8 of N(0, 8^2)


def _quantised_operand(ctx: InputContext, rows: int, cols: int, quant: str):  # noqa: ANN202
    torch = ctx.torch
    if quant == "int8":
        return ctx.randint(rows, cols, low=-127, high=128, dtype=torch.int8)
    values = ctx.randn(rows, cols, scale=8.0, dtype=torch.float32).clamp(-448, 448)
    return values.to(torch.float8_e4m3fn)


def _gemm_scales(ctx: InputContext, count: int, k: int, quant: str):  # noqa: ANN202
    # Scales that give outputs of order 1-10: scale_a * scale_b * sqrt(K) * sigma^2 ~ 4.
    base = 2.0 / (_operand_sigma(quant) * k ** 0.25)
    return ctx.uniform(count, 1, low=0.5 * base, high=1.5 * base, dtype=ctx.torch.float32)


def _scaled_mm_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    m, n, k, quant = p["m"], p["n"], p["k"], p["quant"]
    a = _quantised_operand(ctx, m, k, quant)
    b = _quantised_operand(ctx, n, k, quant).t()  # [K, N], column-major, as vLLM's weights
    scale_a = _gemm_scales(ctx, m if p.get("per_token") else 1, k, quant)
    scale_b = _gemm_scales(ctx, n if p.get("per_channel") else 1, k, quant)
    bias = ctx.randn(n) if p.get("bias") else None
    out = ctx.randn(m, n, scale=1000.0)
    return [out, a, b, scale_a, scale_b, bias]


def _accumulate(a, b):  # noqa: ANN001, ANN202 - a @ b exactly: int8 and fp8 products fit fp64
    return a.double() @ b.double()


def _epilogue(acc, scale_a, scale_b, bias, out):  # noqa: ANN001, ANN202
    d = scale_a.float().reshape(-1, 1) * (scale_b.float().reshape(1, -1) * acc.float())
    if bias is not None:
        d = d + bias.float()
    out.copy_(d.to(out.dtype))


def _scaled_mm_reference(out, a, b, scale_a, scale_b, bias):  # noqa: ANN001, ANN202
    acc = _accumulate(a, b)
    _epilogue(acc, scale_a, scale_b, bias, out)


SCALED_MM_CASES = (
    ShapeCase("int8_per_tensor", {"m": 7, "n": 48, "k": 64, "quant": "int8"}),
    ShapeCase("int8_per_token_channel_bias", {"m": 5, "n": 80, "k": 96, "quant": "int8",
                                              "per_token": True, "per_channel": True,
                                              "bias": True}),
    ShapeCase("fp8_per_tensor", {"m": 6, "n": 64, "k": 128, "quant": "fp8"}),
    ShapeCase("fp8_per_token_channel_bias", {"m": 9, "n": 32, "k": 80, "quant": "fp8",
                                             "per_token": True, "per_channel": True,
                                             "bias": True}),
    ShapeCase("heldout_int8_channel", {"m": 3, "n": 40, "k": 48, "quant": "int8",
                                       "per_channel": True, "bias": True}, heldout=True),
    ShapeCase("llama3_8b_qkv_int8", {"m": 4096, "n": 6144, "k": 4096, "quant": "int8",
                                     "per_token": True, "per_channel": True}, tier=LARGE),
    ShapeCase("llama3_70b_down_fp8", {"m": 512, "n": 8192, "k": 28672, "quant": "fp8",
                                      "per_token": True, "per_channel": True}, tier=LARGE),
    ShapeCase("qwen2_7b_mlp_fp8_bias", {"m": 1024, "n": 18944, "k": 3584, "quant": "fp8",
                                        "bias": True}, tier=LARGE),
)


def _azp_inputs(ctx: InputContext) -> list[Any]:
    """Activations quantised asymmetrically as vLLM's dynamic_scaled_int8_quant does (so the
    zero points and the correction are what a model sees): a = clamp(round(x / s) + zp)."""
    torch, p = ctx.torch, ctx.params
    m, n, k = p["m"], p["n"], p["k"]
    per_token = p.get("per_token_azp", False)
    b = _quantised_operand(ctx, n, k, "int8").t()
    zp_count = m if per_token else 1
    azp_values = ctx.randint(zp_count, low=-40, high=41, dtype=torch.int32)
    centred = ctx.randint(m, k, low=-80, high=81, dtype=torch.int32)
    a = (centred + azp_values.reshape(-1, 1)).clamp(-128, 127).to(torch.int8)
    colsum = b.to(torch.int32).sum(dim=0)  # J @ B, [N]
    if per_token:
        azp_adj, azp = colsum.to(torch.int32), azp_values.to(torch.int32)
    else:
        azp_adj, azp = (azp_values[0] * colsum).to(torch.int32), None
    scale_a = _gemm_scales(ctx, m if p.get("per_token_scale") else 1, k, "int8")
    scale_b = _gemm_scales(ctx, n if p.get("per_channel") else 1, k, "int8")
    bias = ctx.randn(n) if p.get("bias") else None
    return [ctx.randn(m, n, scale=1000.0), a, b, scale_a, scale_b, azp_adj, azp, bias]


def _azp_reference(out, a, b, scale_a, scale_b, azp_adj, azp, bias):  # noqa: ANN001, ANN202
    acc = _accumulate(a, b)
    if azp is None:
        corrected = acc - azp_adj.double().reshape(1, -1)
    else:
        corrected = acc - (azp.long().reshape(-1, 1) * azp_adj.long().reshape(1, -1)).double()
    _epilogue(corrected, scale_a, scale_b, bias, out)


AZP_CASES = (
    ShapeCase("per_tensor_azp", {"m": 7, "n": 48, "k": 64}),
    ShapeCase("per_token_azp_bias", {"m": 5, "n": 64, "k": 96, "per_token_azp": True,
                                     "per_token_scale": True, "per_channel": True,
                                     "bias": True}),
    ShapeCase("per_tensor_azp_channel_bias", {"m": 6, "n": 32, "k": 80, "per_channel": True,
                                              "bias": True}),
    ShapeCase("heldout_per_token", {"m": 4, "n": 48, "k": 48, "per_token_azp": True,
                                    "per_token_scale": True}, heldout=True),
    ShapeCase("llama3_8b_gate_up_azp", {"m": 2048, "n": 28672, "k": 4096,
                                        "per_token_azp": True, "per_token_scale": True,
                                        "per_channel": True}, tier=LARGE),
    ShapeCase("qwen2_7b_o_proj_azp", {"m": 4096, "n": 3584, "k": 3584, "per_channel": True,
                                      "bias": True}, tier=LARGE),
)

# The int8 accumulator is exact and the fp8 one differs only by summation order, so the
# output differs by the fp32 epilogue and the final rounding: half an ulp of fp16/bf16 at
# outputs of order 1-10 (a per-dtype atol sized for that, not the default 1e-4 * K).
GEMM_TOLERANCES = {"float16": Tolerance(rtol=2e-3, atol=1e-2),
                   "bfloat16": Tolerance(rtol=1.6e-2, atol=5e-2)}

SCALED_MM_RULE = (
    "a: [M, K] row-major; b: [K, N] column-major (b.stride(0) == 1: the transpose of a "
    "contiguous [N, K] weight); scale_a float32 with 1 (per tensor) or M (per token, shape "
    "[M, 1]) entries, scale_b float32 with 1 or N (per output channel, shape [N, 1]) entries; "
    "bias None or [N] of out's dtype; out [M, N] float16 or bfloat16 (contiguous). acc = a @ "
    "b accumulated exactly in int32 for int8 (in float32 for fp8); ")


# == hadacore_transform ========================================================================
def _hadamard_reference(x, inplace):  # noqa: ANN001, ANN202
    import torch

    n = x.shape[-1]
    y = x.float().reshape(-1, n).clone()
    h = 1
    while h < n:  # the fast Walsh-Hadamard transform, Sylvester (natural) order
        pairs = y.view(-1, n // (2 * h), 2, h)
        first, second = pairs[:, :, 0, :], pairs[:, :, 1, :]
        y = torch.stack((first + second, first - second), dim=2).reshape(-1, n)
        h *= 2
    result = (y / math.sqrt(n)).to(x.dtype).reshape(x.shape)
    if inplace:
        x.copy_(result)
        return x
    return result


def _hadamard_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    shape = tuple(p["shape"])
    return [ctx.randn(*shape), bool(p["inplace"])]


HADAMARD_CASES = (
    ShapeCase("n8_inplace", {"shape": (32, 8), "inplace": True}),
    ShapeCase("n64_copy", {"shape": (3, 4, 64), "inplace": False}),
    ShapeCase("n128_inplace", {"shape": (2, 128), "inplace": True}),
    ShapeCase("n256_copy", {"shape": (3, 256), "inplace": False}),
    ShapeCase("n1024_inplace", {"shape": (1, 1024), "inplace": True}),
    ShapeCase("heldout_n512", {"shape": (2, 512), "inplace": False}, heldout=True),
    ShapeCase("quarot_hidden_4096", {"shape": (4096, 4096), "inplace": True}, tier=LARGE),
    ShapeCase("head_dim_128_rotation", {"shape": (4096, 32, 128), "inplace": True},
              tier=LARGE),
    ShapeCase("n16384_copy", {"shape": (512, 16384), "inplace": False}, tier=LARGE),
)

# vLLM computes each 16-point stage on tensor cores (fp16 accumulation for fp16 inputs,
# fp32 then a bf16 rounding for bf16), up to four stages: a few units in the last place.
HADAMARD_TOLERANCES = {"float16": Tolerance(rtol=4e-3, atol=4e-3),
                       "bfloat16": Tolerance(rtol=3e-2, atol=3e-2)}


# == GPTQ ======================================================================================
def _pack_along_rows(values, bits):  # noqa: ANN001, ANN202 - [K, N] ints -> [K*bits/32, N] int32
    import torch

    per_word = 32 // bits
    k, n = values.shape
    grouped = values.long().reshape(k // per_word, per_word, n)
    shifts = (torch.arange(per_word, device=values.device) * bits).reshape(1, per_word, 1)
    return _to_int32((grouped << shifts).sum(dim=1))


def _pack_along_cols(values, bits, order=None):  # noqa: ANN001, ANN202 - [G, N] -> [G, N*bits/32]
    import torch

    per_word = 32 // bits
    g, n = values.shape
    grouped = values.long().reshape(g, n // per_word, per_word)
    slots = torch.arange(per_word) if order is None else torch.tensor(order)
    shifts = (slots.to(values.device) * bits).reshape(1, 1, per_word)
    return _to_int32((grouped << shifts).sum(dim=2))


def _to_int32(words):  # noqa: ANN001, ANN202 - unsigned 32-bit patterns held in int64
    import torch

    return torch.where(words >= 2 ** 31, words - 2 ** 32, words).to(torch.int32)


def _unpack_rows(words, bits):  # noqa: ANN001, ANN202 - [K*bits/32, N] int32 -> [K, N] int64
    import torch

    per_word = 32 // bits
    shifts = (torch.arange(per_word, device=words.device) * bits).reshape(1, per_word, 1)
    unpacked = (words.long()[:, None, :] >> shifts) & ((1 << bits) - 1)
    return unpacked.reshape(-1, words.shape[1])


def _unpack_cols(words, bits, order=None):  # noqa: ANN001, ANN202 - [G, N*bits/32] -> [G, N]
    import torch

    per_word = 32 // bits
    slots = torch.arange(per_word) if order is None else torch.tensor(order)
    shifts = (slots.to(words.device) * bits).reshape(1, 1, per_word)
    unpacked = (words.long()[:, :, None] >> shifts) & ((1 << bits) - 1)
    return unpacked.reshape(words.shape[0], -1)


def _gptq_g_idx(ctx: InputContext, k: int, group: int, act_order: bool):  # noqa: ANN202
    torch = ctx.torch
    g_idx = torch.arange(k) // group
    if act_order:  # desc_act: input rows were quantised in a permuted order
        g_idx = g_idx[torch.randperm(k, generator=ctx.generator)]
    return g_idx.to(torch.int32).to(ctx.device)


def _gptq_gemm_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    m, n, k, bits, group = p["m"], p["n"], p["k"], p["bits"], p["group_size"]
    groups = k // group
    top = 1 << bits
    q = ctx.randint(k, n, low=0, high=top)
    # GPTQ v1 stores zero - 1: stored values in [0, top - 2] give zeros in [1, top - 1].
    zeros = ctx.randint(groups, n, low=0, high=top - 1)
    scales = ctx.uniform(groups, n, low=0.5, high=1.5, dtype=torch.float32) * (
        2.0 / (top * math.sqrt(k)))
    a = ctx.randn(m, k)
    return [a, _pack_along_rows(q, bits), _pack_along_cols(zeros, bits),
            scales.to(ctx.dtype), _gptq_g_idx(ctx, k, group, p.get("act_order", False)),
            False, bool(p.get("v2", False)), int(bits)]


def _gptq_dequantize(b_q_weight, b_gptq_qzeros, b_gptq_scales, b_g_idx, use_v2_format,  # noqa: ANN001, ANN202
                     bit):  # noqa: ANN001
    q = _unpack_rows(b_q_weight, bit)
    zeros = _unpack_cols(b_gptq_qzeros, bit) + (0 if use_v2_format else 1)
    g = b_g_idx.long()
    diff = (q - zeros[g]).to(b_gptq_scales.dtype)  # small integers: exact in fp16
    return (diff.float() * b_gptq_scales[g].float()).to(b_gptq_scales.dtype)


def _gptq_gemm_reference(a, b_q_weight, b_gptq_qzeros, b_gptq_scales, b_g_idx, use_exllama,  # noqa: ANN001, ANN202
                         use_v2_format, bit):  # noqa: ANN001
    w = _gptq_dequantize(b_q_weight, b_gptq_qzeros, b_gptq_scales, b_g_idx, use_v2_format, bit)
    return (a.float() @ w.float()).to(a.dtype)


GPTQ_GEMM_CASES = (
    ShapeCase("int4_g32", {"m": 5, "n": 64, "k": 128, "bits": 4, "group_size": 32}),
    ShapeCase("int4_act_order", {"m": 3, "n": 32, "k": 256, "bits": 4, "group_size": 64,
                                 "act_order": True}),
    ShapeCase("int8_g64", {"m": 4, "n": 48, "k": 128, "bits": 8, "group_size": 64}),
    ShapeCase("int4_v2_zeros", {"m": 6, "n": 40, "k": 64, "bits": 4, "group_size": 32,
                                "v2": True}),
    ShapeCase("heldout_int8_act_order", {"m": 2, "n": 32, "k": 96, "bits": 8,
                                         "group_size": 32, "act_order": True}, heldout=True),
    ShapeCase("llama3_8b_q_proj_decode", {"m": 16, "n": 4096, "k": 4096, "bits": 4,
                                          "group_size": 128, "act_order": True}, tier=LARGE),
    ShapeCase("qwen2_7b_down_prefill", {"m": 1024, "n": 3584, "k": 18944, "bits": 4,
                                        "group_size": 128}, tier=LARGE),
    ShapeCase("llama3_8b_up_int8", {"m": 256, "n": 14336, "k": 4096, "bits": 8,
                                    "group_size": 128}, tier=LARGE),
)


def _shuffle_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    k, n, bits = p["k"], p["n"], p["bits"]
    q = ctx.randint(k, n, low=0, high=1 << bits)
    if p.get("act_order"):
        g_idx = _gptq_g_idx(ctx, k, p["group_size"], True).long()
        perm = torch.argsort(g_idx, stable=True).to(torch.int32)  # as vLLM derives q_perm
    else:
        perm = torch.empty(0, dtype=torch.int32, device=ctx.device)
    return [_pack_along_rows(q, bits), perm, int(bits)]


_SHUFFLE_4BIT_SLOT = (0, 4, 1, 5, 2, 6, 3, 7)  # row r of a word goes to nibble slot[r]


def _shuffle_reference(q_weight, q_perm, bit):  # noqa: ANN001, ANN202
    import torch

    values = _unpack_rows(q_weight, bit)
    if q_perm.numel():
        values = values[q_perm.long()]  # make_sequential: new row i is old row q_perm[i]
    if bit == 4:
        per_word, n = 8, values.shape[1]
        grouped = values.reshape(-1, per_word, n)
        slots = torch.tensor(_SHUFFLE_4BIT_SLOT, device=values.device).reshape(1, per_word, 1)
        q_weight.copy_(_to_int32((grouped << (slots * 4)).sum(dim=1)))
    else:
        q_weight.copy_(_pack_along_rows(values, bit))


SHUFFLE_CASES = (
    ShapeCase("int4_act_order", {"k": 64, "n": 32, "bits": 4, "act_order": True,
                                 "group_size": 16}),
    ShapeCase("int4_no_perm", {"k": 128, "n": 24, "bits": 4}),
    ShapeCase("int8_act_order", {"k": 64, "n": 40, "bits": 8, "act_order": True,
                                 "group_size": 32}),
    ShapeCase("heldout_int4", {"k": 96, "n": 16, "bits": 4, "act_order": True,
                               "group_size": 32}, heldout=True),
    ShapeCase("llama3_8b_q_proj", {"k": 4096, "n": 4096, "bits": 4, "act_order": True,
                                   "group_size": 128}, tier=LARGE),
    ShapeCase("llama3_8b_down", {"k": 14336, "n": 4096, "bits": 4}, tier=LARGE),
)


# == AWQ =======================================================================================
AWQ_ORDER = (0, 4, 1, 5, 2, 6, 3, 7)  # column 8c + j of a word sits in nibble AWQ_ORDER[j]


def _awq_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    m, n, k, group = p["m"], p["n"], p["k"], p["group_size"]
    q = ctx.randint(k, n, low=0, high=16)
    zeros = ctx.randint(k // group, n, low=0, high=16)
    scales = ctx.uniform(k // group, n, low=0.5, high=1.5, dtype=torch.float32) * (
        2.0 / (16 * math.sqrt(k)))
    return [ctx.randn(m, k), _pack_along_cols(q, 4, AWQ_ORDER), scales.to(ctx.dtype),
            _pack_along_cols(zeros, 4, AWQ_ORDER), int(p["split_k"])]


def _awq_reference(input, qweight, scales, qzeros, split_k_iters):  # noqa: ANN001, ANN202, A002
    group = qweight.shape[0] // qzeros.shape[0]
    q = _unpack_cols(qweight, 4, AWQ_ORDER)
    zeros = _unpack_cols(qzeros, 4, AWQ_ORDER).repeat_interleave(group, dim=0)
    w = ((q - zeros).to(scales.dtype).float()
         * scales.repeat_interleave(group, dim=0).float()).to(scales.dtype)
    return (input.float() @ w.float()).to(input.dtype)


AWQ_CASES = (
    ShapeCase("g32", {"m": 5, "n": 64, "k": 128, "group_size": 32, "split_k": 1}),
    ShapeCase("g64_split2", {"m": 3, "n": 48, "k": 256, "group_size": 64, "split_k": 2}),
    ShapeCase("g128_one_row", {"m": 1, "n": 32, "k": 128, "group_size": 128, "split_k": 1}),
    ShapeCase("heldout_g32", {"m": 7, "n": 40, "k": 96, "group_size": 32, "split_k": 1},
              heldout=True),
    ShapeCase("llama3_8b_qkv_decode", {"m": 16, "n": 6144, "k": 4096, "group_size": 128,
                                       "split_k": 8}, tier=LARGE),
    ShapeCase("mistral_7b_down_prefill", {"m": 2048, "n": 4096, "k": 14336,
                                          "group_size": 128, "split_k": 1}, tier=LARGE),
)


# == GGML ======================================================================================
# GGML type ids (ggml.h) -> (block bytes for 32 values, kind).
GGML_TYPES = {"Q4_0": (2, 18), "Q4_1": (3, 20), "Q5_0": (6, 22), "Q5_1": (7, 24),
              "Q8_0": (8, 34)}
GGML_NAMES = {type_id: name for name, (type_id, _) in GGML_TYPES.items()}


def _ggml_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    data = _ggml_inputs_for(ctx, p["m"], p["n"], p["type"])
    return [data, GGML_TYPES[p["type"]][0], int(p["m"]), int(p["n"]), ctx.dtype]


def _ggml_inputs_for(ctx: InputContext, m: int, n: int, kind: str):  # noqa: ANN202
    torch = ctx.torch
    _, block_bytes = GGML_TYPES[kind]
    blocks = m * n // 32
    # fp16 deltas (and mins) of realistic size and either sign; random quant bytes.
    d = (ctx.uniform(blocks, 1, low=0.002, high=0.03, dtype=torch.float32)
         * torch.where(torch.rand(blocks, 1, generator=ctx.generator) < 0.1, -1.0, 1.0)
         .to(ctx.device))
    parts = [d.to(torch.float16).view(torch.uint8)]
    if kind in ("Q4_1", "Q5_1"):
        mins = ctx.uniform(blocks, 1, low=-0.3, high=0.1, dtype=torch.float32)
        parts.append(mins.to(torch.float16).view(torch.uint8))
    rest = block_bytes - 2 * len(parts)
    parts.append(ctx.randint(blocks, rest, low=0, high=256, dtype=torch.uint8))
    return torch.cat(parts, dim=1).reshape(m, n // 32 * block_bytes)


def _ggml_blocks(W, rows, cols, kind):  # noqa: ANN001, ANN202, N803
    """The raw block contents of a GGML matrix: q [rows, cols / 32, 32] (the stored integers:
    nibbles with the fifth bit for Q5, int8 for Q8_0), d and, for Q4_1/Q5_1, m [rows, cols /
    32] as float32."""
    import torch

    blocks = W.reshape(rows * cols // 32, -1)
    d = blocks[:, 0:2].contiguous().view(torch.float16).float().reshape(-1)
    offset, mins = 2, None
    if kind in ("Q4_1", "Q5_1"):
        mins = blocks[:, 2:4].contiguous().view(torch.float16).float().reshape(-1)
        offset = 4
    if kind == "Q8_0":
        q = blocks[:, offset:offset + 32].contiguous().view(torch.int8).long()
    else:
        if kind in ("Q5_0", "Q5_1"):
            qh = blocks[:, offset:offset + 4].long()
            high_bits = qh[:, 0] | (qh[:, 1] << 8) | (qh[:, 2] << 16) | (qh[:, 3] << 24)
            offset += 4
        qs = blocks[:, offset:offset + 16].long()
        low, high = qs & 0xF, qs >> 4  # values j and j + 16 of the block
        if kind in ("Q5_0", "Q5_1"):
            j = torch.arange(16, device=W.device)
            low = low | (((high_bits[:, None] >> j) & 1) << 4)
            high = high | (((high_bits[:, None] >> (j + 16)) & 1) << 4)
        q = torch.cat([low, high], dim=1)
    shape = (rows, cols // 32)
    return (q.reshape(*shape, 32), d.reshape(shape),
            None if mins is None else mins.reshape(shape))


def _ggml_reference(W, quant_type, m, n, dtype):  # noqa: ANN001, ANN202, N803
    import torch

    kind = GGML_NAMES[quant_type]
    q, d, mins = _ggml_blocks(W, m, n, kind)
    q, d = q.float(), d[..., None]
    if kind == "Q8_0":
        values = q * d
    elif kind == "Q4_0":
        values = (q - 8.0) * d
    elif kind == "Q5_0":
        values = (q - 16.0) * d
    else:
        values = q * d + mins[..., None]
    return values.reshape(m, n).to(dtype if dtype is not None else torch.float16)


# -- GGML GEMV/GEMM with on-the-fly q8_1 activations ------------------------------------------
def _round_half_away(v):  # noqa: ANN001, ANN202 - C's roundf
    import torch

    t = torch.trunc(v)
    return t + torch.sign(v) * ((v - t).abs() >= 0.5).float()


def _quantize_q8_1(x):  # noqa: ANN001, ANN202
    """vLLM's quantize_q8_1 per 32-value block: d = amax / 127 (float32), q = roundf(x / d)
    (0 when amax is 0), and the block's d and sum(x) stored as fp16."""
    import torch

    blocks = x.float().reshape(x.shape[0], -1, 32)
    amax = blocks.abs().amax(dim=-1, keepdim=True)
    # A tensor divisor, not the number 127: for a Python-number divisor torch's CUDA kernel
    # multiplies by the rounded reciprocal, 1 ulp off the correctly rounded amax / 127 about
    # one time in twenty, and that moves x / d across a .5 and flips q (the H200's Q4_0
    # large cases, up to 0.023 off). vLLM's and the reference kernel's division is exact.
    d = amax / torch.full_like(amax, 127.0)
    q = torch.where(amax == 0, torch.zeros_like(blocks), _round_half_away(blocks / d))
    d16 = d.squeeze(-1).to(torch.float16).float()
    s16 = blocks.sum(dim=-1).to(torch.float16).float()
    return q, d16, s16


def _half(v):  # noqa: ANN001, ANN202 - a product vLLM forms in fp16 (__hmul2)
    import torch

    return v.to(torch.float16).float()


def _q8_1_matmul(W, X, kind, rows, mmq=False):  # noqa: ANN001, ANN202, N803
    """out[b, r] = sum over blocks of vLLM's vec_dot_<type>_q8_1 of weight row r and the q8_1
    blocks of X[b], in float32. mmq: the tiled GEMM path (ggml_mul_mat_a8), whose Q5_0 tiles
    hold q - 16 and so use d16 * sum((q - 16) * q_x) instead of the block sum s16."""
    import torch

    cols = X.shape[1]
    qw, dw, mw = _ggml_blocks(W, rows, cols, kind)
    qx, dx, sx = _quantize_q8_1(X)
    sumi = torch.einsum("rkj,bkj->brk", qw.double(), qx.double()).float()  # exact integers
    dw_, dx_, sx_ = dw[None], dx[:, None, :], sx[:, None, :]
    if kind == "Q8_0":
        blockdot = dw_ * dx_ * sumi
    elif kind == "Q4_0":
        blockdot = dw_ * (sumi * dx_ - 8.0 * sx_)
    elif kind == "Q5_0" and mmq:
        shifted = torch.einsum("rkj,bkj->brk", (qw - 16).double(), qx.double()).float()
        blockdot = dw_ * dx_ * shifted
    elif kind == "Q5_0":
        blockdot = dw_ * (sumi * dx_ - 16.0 * sx_)
    else:  # Q4_1, Q5_1: d and m multiplied with the activations' d and sum in fp16
        blockdot = sumi * _half(dw_ * dx_) + _half(mw[None] * sx_)
    return blockdot.sum(dim=-1)


def _mul_mat_vec_a8_reference(W, X, quant_type, row):  # noqa: ANN001, ANN202, N803
    return _q8_1_matmul(W, X, GGML_NAMES[quant_type], row).to(X.dtype)


def _mul_mat_a8_reference(W, X, quant_type, row):  # noqa: ANN001, ANN202, N803
    return _q8_1_matmul(W, X, GGML_NAMES[quant_type], row, mmq=True).to(X.dtype)


def _moe_vec_reference(X, W, topk_ids, top_k, quant_type, row, tokens):  # noqa: ANN001, ANN202, N803
    import torch

    kind = GGML_NAMES[quant_type]
    flat = topk_ids.reshape(-1).long()
    out = torch.empty(flat.numel(), row, dtype=torch.float32, device=X.device)
    for expert in torch.unique(flat).tolist():
        slots = (flat == expert).nonzero().reshape(-1)
        out[slots] = _q8_1_matmul(W[expert], X[slots // top_k], kind, row)
    return out.to(X.dtype)


def _ggml_weight(ctx: InputContext, rows: int, cols: int, kind: str):  # noqa: ANN202
    return _ggml_inputs_for(ctx, rows, cols, kind)


def _q8_1_activations(ctx: InputContext, rows: int, cols: int) -> Any:
    """Normal values on a grid of 1/64 (|x| < 8: exact in fp16, bf16 rounds them onto a coarser
    part of the same grid), so a q8_1 block's float32 sum is exact in every summation order:
    otherwise two correct orders round s to different fp16 values now and then, which Q4_0's
    8 * d_w * s16 carries into the output (0.006 in an H200 run, above any fair atol)."""
    values = ctx.randn(rows, cols, dtype=ctx.torch.float32).clamp(-7.9, 7.9)
    return ((values * 64).round() / 64).to(ctx.dtype)


def _mul_mat_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    W = _ggml_weight(ctx, p["row"], p["col"], p["type"])  # noqa: N806
    X = _q8_1_activations(ctx, p["batch"], p["col"])  # noqa: N806
    return [W, X, GGML_TYPES[p["type"]][0], int(p["row"])]


def _moe_vec_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    weights = [_ggml_weight(ctx, p["row"], p["col"], p["type"]) for _ in range(p["experts"])]
    W = torch.stack(weights)  # noqa: N806 - [experts, row, col / 32 * block_bytes]
    X = _q8_1_activations(ctx, p["tokens"], p["col"])  # noqa: N806
    scores = torch.rand((p["tokens"], p["experts"]), generator=ctx.generator)
    ids = scores.topk(p["top_k"], dim=-1).indices.to(torch.int32).to(ctx.device)
    return [X, W, ids, int(p["top_k"]), GGML_TYPES[p["type"]][0], int(p["row"]),
            int(p["tokens"])]


GGML_CASES = (
    ShapeCase("q8_0", {"m": 5, "n": 96, "type": "Q8_0"}),
    ShapeCase("q4_0", {"m": 7, "n": 64, "type": "Q4_0"}),
    ShapeCase("q4_1", {"m": 3, "n": 128, "type": "Q4_1"}),
    ShapeCase("q5_0", {"m": 4, "n": 96, "type": "Q5_0"}),
    ShapeCase("q5_1", {"m": 6, "n": 64, "type": "Q5_1"}),
    ShapeCase("heldout_q4_0", {"m": 9, "n": 32, "type": "Q4_0"}, heldout=True),
    ShapeCase("heldout_q5_1", {"m": 2, "n": 160, "type": "Q5_1"}, heldout=True),
    ShapeCase("llama3_8b_up_q4_0", {"m": 14336, "n": 4096, "type": "Q4_0"}, tier=LARGE),
    ShapeCase("llama3_8b_q_q8_0", {"m": 4096, "n": 4096, "type": "Q8_0"}, tier=LARGE),
    ShapeCase("qwen2_7b_down_q5_1", {"m": 3584, "n": 18944, "type": "Q5_1"}, tier=LARGE),
)


def _mm_case(name: str, batch: int, row: int, col: int, kind: str, **extra: Any) -> ShapeCase:
    return ShapeCase(name, {"batch": batch, "row": row, "col": col, "type": kind},
                     **extra)


MUL_MAT_VEC_CASES = (
    _mm_case("q4_0", 1, 48, 256, "Q4_0"),
    _mm_case("q8_0", 1, 32, 128, "Q8_0"),
    _mm_case("q4_1", 1, 40, 96, "Q4_1"),
    _mm_case("q5_0", 1, 16, 160, "Q5_0"),
    _mm_case("q5_1", 1, 24, 64, "Q5_1"),
    _mm_case("heldout_q8_0", 1, 20, 192, "Q8_0", heldout=True),
    _mm_case("llama3_8b_down_decode_q4_0", 1, 4096, 14336, "Q4_0", tier=LARGE),
    _mm_case("qwen2_7b_up_decode_q8_0", 1, 18944, 3584, "Q8_0", tier=LARGE),
)

MUL_MAT_CASES = (
    _mm_case("q4_0", 5, 48, 256, "Q4_0"),
    _mm_case("q8_0", 7, 32, 128, "Q8_0"),
    _mm_case("q4_1", 3, 40, 96, "Q4_1"),
    _mm_case("q5_0", 4, 16, 160, "Q5_0"),
    _mm_case("q5_1", 6, 24, 64, "Q5_1"),
    _mm_case("heldout_q5_0", 9, 20, 64, "Q5_0", heldout=True),
    _mm_case("llama3_8b_up_prefill_q4_0", 256, 14336, 4096, "Q4_0", tier=LARGE),
    _mm_case("llama3_8b_o_proj_q5_1", 64, 4096, 4096, "Q5_1", tier=LARGE),
)

MOE_VEC_CASES = (
    ShapeCase("q4_0_e4_top2", {"experts": 4, "tokens": 3, "top_k": 2, "row": 32, "col": 128,
                               "type": "Q4_0"}),
    ShapeCase("q8_0_e8_top2", {"experts": 8, "tokens": 2, "top_k": 2, "row": 24, "col": 96,
                               "type": "Q8_0"}),
    ShapeCase("q5_1_e6_top3", {"experts": 6, "tokens": 2, "top_k": 3, "row": 16, "col": 64,
                               "type": "Q5_1"}),
    ShapeCase("heldout_q4_1", {"experts": 5, "tokens": 3, "top_k": 2, "row": 20, "col": 64,
                               "type": "Q4_1"}, heldout=True),
    ShapeCase("mixtral_decode_q4_0", {"experts": 8, "tokens": 8, "top_k": 2, "row": 14336,
                                      "col": 4096, "type": "Q4_0"}, tier=LARGE),
    ShapeCase("qwen3_30b_a3b_decode_q8_0", {"experts": 128, "tokens": 4, "top_k": 8,
                                            "row": 768, "col": 2048, "type": "Q8_0"},
              tier=LARGE),
)

_MM_WRAPPER = """def kernel(W, X, quant_type, row):  # noqa: N803, ANN001, ANN201
    batch = X.shape[0]
    out = torch.empty((batch, row), dtype=X.dtype, device=X.device)
    _launch(W, X.contiguous(), out, None, row, 1, 0, quant_type, False, batch, mmq=__MMQ__)
    return out
"""
_MOE_WRAPPER = """def kernel(X, W, topk_ids, top_k, quant_type, row, tokens):  # noqa: N803, ANN001, ANN201
    out = torch.empty((tokens * top_k, row), dtype=X.dtype, device=X.device)
    _launch(W, X.contiguous(), out, topk_ids.contiguous().view(-1), row, top_k, W.stride(0),
            quant_type, True, tokens * top_k)
    return out
"""


def _q8_1_kernel_text(name: str, wrapper: str, mmq: bool = False) -> str:
    return (kernel_file("_ggml_q8_1").replace("__NAME__", name)
            .replace("__WRAPPER__", wrapper.replace("__MMQ__", repr(mmq))))


# Admits the summation order of the block partial sums (the activations keep each q8_1
# block's own sum exact, see _q8_1_activations), not a kernel that skips the activation
# quantisation (about 0.5% of the output off).
GGML_MM_TOLERANCES = {"float32": Tolerance(rtol=1e-4, atol=5e-3),
                      "float16": Tolerance(rtol=1e-3, atol=5e-3),
                      "bfloat16": Tolerance(rtol=8e-3, atol=2e-2)}

Q8_1_RULE = (
    "X is quantised on the fly to GGML's q8_1, per block of 32 consecutive values: amax = "
    "max |x|, d = amax / 127 (float32), q = roundf(x / d) (round half away from zero; 0 when "
    "amax is 0), and the block's d and s = sum(x) (float32 sum) are kept as fp16 (d16, s16). "
    "Per weight block (d_w fp16, integers q_w as stored: Q4_0/Q4_1 nibbles 0..15, Q5_0/Q5_1 "
    "five-bit values 0..31, Q8_0 int8; layouts as in ggml_dequantize) and the matching X "
    "block, with sumi = sum_j q_w[j] * q[j] (exact): Q8_0: d_w * d16 * sumi; Q4_0: d_w * (sumi "
    "* d16 - 8 * s16); Q5_0: d_w * (sumi * d16 - 16 * s16); Q4_1/Q5_1: sumi * fp16(d_w * d16) "
    "+ fp16(m_w * s16) (vLLM multiplies these pairs in fp16). The output element is the "
    "float32 sum over the row's blocks, rounded to X's dtype. Supported types: Q4_0 (2), Q4_1 "
    "(3), Q5_0 (6), Q5_1 (7), Q8_0 (8). ")

# Every dequantised value is computed exactly in float32 and rounded once: compared exactly.
EXACT_ALL = {dtype: _quant.EXACT for dtype in ("float32", "float16", "bfloat16")}


# == specs =====================================================================================
def _gemm_flops(p: Mapping[str, Any]) -> float:
    return 2.0 * p["m"] * p["n"] * p["k"]


def operators() -> list[OperatorSpec]:
    return [
        vllm_op(
            "cutlass_scaled_mm",
            signature="kernel(out: Tensor, a: Tensor, b: Tensor, scale_a: Tensor, "
                      "scale_b: Tensor, bias: Tensor | None) -> None",
            description=(
                "vLLM's cutlass_scaled_mm (torch.ops._C; the w8a8 GEMM behind "
                "vllm._custom_ops.cutlass_scaled_mm), with int8 or torch.float8_e4m3fn "
                "operands (both the same type). " + SCALED_MM_RULE + "out = scale_a[m] * "
                "(scale_b[n] * float(acc[m, n])) (+ bias[n]) in float32, rounded to out's "
                "dtype. Writes out, returns None; every other argument must be left "
                "unchanged. (vLLM's blockwise-fp8 scale layout is not among kgb's cases.)"),
            reference=_scaled_mm_reference, make_inputs=_scaled_mm_inputs,
            cases=SCALED_MM_CASES, dtypes=HALF_TYPES,
            flops=_gemm_flops,
            bytes_moved=lambda p, size: (p["m"] + p["n"]) * p["k"] + p["m"] * p["n"] * size,
            tags=("gemm", "quant", "out_param"), mutated_args=(0,),
            tolerances=GEMM_TOLERANCES,
            vllm_callable="torch.ops._C.cutlass_scaled_mm",
        ),
        vllm_op(
            "cutlass_scaled_mm_azp",
            signature="kernel(out: Tensor, a: Tensor, b: Tensor, scale_a: Tensor, "
                      "scale_b: Tensor, azp_adj: Tensor, azp: Tensor | None, "
                      "bias: Tensor | None) -> None",
            description=(
                "vLLM's cutlass_scaled_mm_azp (torch.ops._C): the int8 scaled GEMM for "
                "asymmetrically quantised activations (a = round(x / s) + zero point). a, b "
                "int8. " + SCALED_MM_RULE + "azp_adj int32 [N]; azp None or int32 [M]. "
                "Per-tensor zero point (azp None; azp_adj = zp * column sums of b): c = acc - "
                "azp_adj[n]; per-token (azp given; azp_adj = column sums of b): c = acc - "
                "azp[m] * azp_adj[n]; the correction is computed in int32. out = scale_a[m] "
                "* (scale_b[n] * float(c)) (+ bias[n]) in float32, rounded to out's dtype. "
                "Writes out, returns None; every other argument must be left unchanged."),
            reference=_azp_reference, make_inputs=_azp_inputs, cases=AZP_CASES,
            dtypes=HALF_TYPES, flops=_gemm_flops,
            bytes_moved=lambda p, size: (p["m"] + p["n"]) * p["k"] + p["m"] * p["n"] * size,
            tags=("gemm", "quant", "out_param"), mutated_args=(0,),
            tolerances=GEMM_TOLERANCES,
            vllm_callable="torch.ops._C.cutlass_scaled_mm_azp",
        ),
        vllm_op(
            "hadacore_transform",
            signature="kernel(x: Tensor, inplace: bool) -> Tensor",
            description=(
                "vLLM's hadacore_transform (csrc/quantization/hadamard/hadacore, the "
                "Hadamard rotation of QuaRot/SpinQuant-style quantisation): the normalised "
                "Sylvester Hadamard transform along the last dim of x (float16 or bfloat16, "
                "any leading shape, contiguous), n = x.shape[-1] a power of two <= 2^15: y[..., "
                "i] = sum_j (-1)^popcount(i & j) x[..., j] / sqrt(n) (H_1 = [1], H_2n = "
                "[[H_n, H_n], [H_n, -H_n]]). If inplace, x is overwritten with y and x is "
                "returned; otherwise x must be left unchanged and y is returned as a new "
                "tensor of x's shape and dtype. vLLM computes in 16-point stages on tensor "
                "cores, so values are compared within a few units in the last place."),
            reference=_hadamard_reference, make_inputs=_hadamard_inputs,
            cases=HADAMARD_CASES, dtypes=HALF_TYPES,
            flops=lambda p: math.prod(p["shape"]) * math.log2(p["shape"][-1]),
            bytes_moved=lambda p, size: 2 * math.prod(p["shape"]) * size,
            tags=("quant", "transform", "inplace"), mutated_args=(0,),
            tolerances=HADAMARD_TOLERANCES,
            vllm_callable="vllm._custom_ops.hadacore_transform",
        ),
        vllm_op(
            "gptq_gemm",
            signature="kernel(a: Tensor, b_q_weight: Tensor, b_gptq_qzeros: Tensor, "
                      "b_gptq_scales: Tensor, b_g_idx: Tensor, use_exllama: bool, "
                      "use_v2_format: bool, bit: int) -> Tensor",
            description=(
                "vLLM's gptq_gemm with use_exllama=False (its GPTQ-layout path: the "
                "exllama path reads weights rewritten by gptq_shuffle and is not among "
                "kgb's cases). a [M, K] float16; bit 4 or 8, p = 32 / bit values a word. "
                "b_q_weight int32 [K / p, N]: q[k, n] = (b_q_weight[k // p, n] >> (bit * (k "
                "% p))) & (2^bit - 1) (packed along K, low bits first; read the words as "
                "unsigned 32-bit). b_gptq_qzeros int32 [G, N / p]: z[g, n] = "
                "(b_gptq_qzeros[g, n // p] >> (bit * (n % p))) & (2^bit - 1), plus 1 unless "
                "use_v2_format (GPTQ v1 stores zero - 1). b_gptq_scales float16 [G, N]. "
                "b_g_idx int32 [K]: the group of input row k (arbitrary with act-order). w[k, "
                "n] = fp16(q[k, n] - z[g, n]) * scales[g, n] rounded to float16, g = "
                "b_g_idx[k]; returns a @ w as a new float16 [M, N] tensor (accumulate in "
                "float32). Every argument must be left unchanged."),
            reference=_gptq_gemm_reference, make_inputs=_gptq_gemm_inputs,
            cases=GPTQ_GEMM_CASES, dtypes=("float16",), flops=_gemm_flops,
            bytes_moved=lambda p, size: (p["m"] * p["k"] + p["m"] * p["n"]) * size
            + p["k"] * p["n"] * p["bits"] / 8,
            reduce_dim=lambda p: p["k"],
            tags=("gemm", "quant"), vllm_callable="vllm._custom_ops.gptq_gemm",
        ),
        vllm_op(
            "gptq_shuffle",
            signature="kernel(q_weight: Tensor, q_perm: Tensor, bit: int) -> None",
            description=(
                "vLLM's gptq_shuffle, in place on q_weight (int32 [K * bit / 32, N], GPTQ's "
                "layout: packed along K, p = 32 / bit values a word, value of row k in bits "
                "bit * (k % p) of word k // p, low bits first), for the exllama kernels. bit "
                "4 or 8. First, when q_perm (int32 [K]) is not empty, the rows are reordered: "
                "new row i = old row q_perm[i] (vLLM's make_sequential; q_perm = "
                "argsort(g_idx) for act-order models). Then, for bit 4, the 8 nibbles of "
                "every word are permuted as exllama's shuffle_4bit_8 does: the value of row "
                "8w + r goes to nibble (0, 4, 1, 5, 2, 6, 3, 7)[r] (even rows to the low "
                "half-word, odd rows to the high one); for bit 8 the words are left in "
                "order. Compared exactly as int32; q_perm must be left unchanged. Returns "
                "None."),
            reference=_shuffle_reference, make_inputs=_shuffle_inputs, cases=SHUFFLE_CASES,
            dtypes=("int32",),
            flops=lambda p: p["k"] * p["n"],
            bytes_moved=lambda p, size: 2 * p["k"] * p["n"] * p["bits"] / 8 + 4 * p["k"],
            tags=("quant", "repack", "inplace"), mutated_args=(0,),
            vllm_callable="vllm._custom_ops.gptq_shuffle",
        ),
        vllm_op(
            "awq_gemm",
            signature="kernel(input: Tensor, qweight: Tensor, scales: Tensor, "
                      "qzeros: Tensor, split_k_iters: int) -> Tensor",
            description=(
                "vLLM's awq_gemm (AWQ int4 weight-only GEMM). input [M, K] float16; qweight "
                "int32 [K, N / 8], qzeros int32 [K / G, N / 8], scales float16 [K / G, N], "
                "G the group size (K / qzeros.shape[0]). Both int32 tensors pack 8 columns "
                "a word in AWQ's interleaved order: the value of column 8c + j sits in bits "
                "4 * (0, 4, 1, 5, 2, 6, 3, 7)[j] of word c (read the words as unsigned "
                "32-bit). w[k, n] = fp16(q[k, n] - z[k // G, n]) * scales[k // G, n], "
                "rounded to float16; returns input @ w as a new float16 [M, N] tensor "
                "(accumulate in float32). split_k_iters (a power of two) only splits vLLM's "
                "work along K; the result does not depend on it. Every argument must be "
                "left unchanged."),
            reference=_awq_reference, make_inputs=_awq_inputs, cases=AWQ_CASES,
            dtypes=("float16",), flops=_gemm_flops,
            bytes_moved=lambda p, size: (p["m"] * p["k"] + p["m"] * p["n"]) * size
            + p["k"] * p["n"] / 2,
            reduce_dim=lambda p: p["k"],
            tags=("gemm", "quant"), vllm_callable="vllm._custom_ops.awq_gemm",
        ),
        vllm_op(
            "ggml_dequantize",
            signature="kernel(W: Tensor, quant_type: int, m: int, n: int, "
                      "dtype: torch.dtype | None) -> Tensor",
            description=(
                "vLLM's ggml_dequantize (GGUF weights): W uint8 [m, n / 32 * block_bytes] "
                "holds the GGML blocks of an [m, n] matrix row by row, one block per 32 "
                "consecutive values, little-endian. quant_type is the GGML type id: Q4_0 "
                "(2): fp16 d, 16 bytes qs; value j (< 16) = ((qs[j] & 0xF) - 8) * d, value j + "
                "16 = ((qs[j] >> 4) - 8) * d. Q4_1 (3): fp16 d, fp16 m, qs[16]; value = q * d + "
                "m with q the nibble as in Q4_0. Q5_0 (6): fp16 d, 4 bytes qh (a uint32), "
                "qs[16]; q_j = (qs[j] & 0xF) | (((qh >> j) & 1) << 4), q_{j+16} = (qs[j] >> "
                "4) | (((qh >> (j + 16)) & 1) << 4), value = (q - 16) * d. Q5_1 (7): fp16 d, "
                "fp16 m, qh, qs; value = q * d + m. Q8_0 (8): fp16 d, 32 int8 qs; value = "
                "qs[j] * d. Block sizes 18, 20, 22, 24, 34 bytes. Values are computed in "
                "float32 (vLLM's dfloat is float) and rounded once to dtype (float16 when "
                "None); returns a new [m, n] tensor, compared exactly. W must be left "
                "unchanged."),
            reference=_ggml_reference, make_inputs=_ggml_inputs, cases=GGML_CASES,
            flops=lambda p: 2 * p["m"] * p["n"],
            bytes_moved=lambda p, size: p["m"] * p["n"] * (size + GGML_TYPES[p["type"]][1] / 32),
            tags=("quant", "dequant"), tolerances=EXACT_ALL,
            vllm_callable="vllm._custom_ops.ggml_dequantize",
        ),
        vllm_op(
            "ggml_mul_mat_vec_a8",
            signature="kernel(W: Tensor, X: Tensor, quant_type: int, row: int) -> Tensor",
            description=(
                "vLLM's ggml_mul_mat_vec_a8 (GGUF decode GEMV, csrc/quantization/gguf "
                "mmvq): W uint8 [row, col / 32 * block_bytes], a GGML matrix of row rows of "
                "col values; X [1, col] (float32, float16 or bfloat16). Returns a new [1, "
                "row] tensor of X's dtype, out[0, r] = (weight row r) . X as vLLM computes "
                "it: " + Q8_1_RULE + "W and X must be left unchanged."),
            reference=_mul_mat_vec_a8_reference, make_inputs=_mul_mat_inputs,
            cases=MUL_MAT_VEC_CASES,
            flops=lambda p: 2 * p["batch"] * p["row"] * p["col"],
            bytes_moved=lambda p, size: p["row"] * p["col"] * GGML_TYPES[p["type"]][1] / 32
            + p["batch"] * (p["col"] + p["row"]) * size,
            tags=("gemm", "quant"), tolerances=GGML_MM_TOLERANCES,
            reference_kernel=lambda: _q8_1_kernel_text("ggml_mul_mat_vec_a8", _MM_WRAPPER),
            vllm_callable="vllm._custom_ops.ggml_mul_mat_vec_a8",
        ),
        vllm_op(
            "ggml_mul_mat_a8",
            signature="kernel(W: Tensor, X: Tensor, quant_type: int, row: int) -> Tensor",
            description=(
                "vLLM's ggml_mul_mat_a8 (GGUF GEMM, csrc/quantization/gguf mmq): W uint8 "
                "[row, col / 32 * block_bytes], X [batch, col] (float32, float16 or "
                "bfloat16). Returns a new [batch, row] tensor of X's dtype, out[b, r] = "
                "(weight row r) . X[b] as vLLM computes it: " + Q8_1_RULE + "Except for Q5_0: "
                "this tiled path (mmq) loads Q5_0 weights as q_w - 16 and computes d_w * d16 "
                "* sum_j (q_w[j] - 16) * q[j], without s16. W and X must be left unchanged."),
            reference=_mul_mat_a8_reference, make_inputs=_mul_mat_inputs,
            cases=MUL_MAT_CASES,
            flops=lambda p: 2 * p["batch"] * p["row"] * p["col"],
            bytes_moved=lambda p, size: p["row"] * p["col"] * GGML_TYPES[p["type"]][1] / 32
            + p["batch"] * (p["col"] + p["row"]) * size,
            tags=("gemm", "quant"), tolerances=GGML_MM_TOLERANCES,
            reference_kernel=lambda: _q8_1_kernel_text("ggml_mul_mat_a8", _MM_WRAPPER, mmq=True),
            vllm_callable="vllm._custom_ops.ggml_mul_mat_a8",
        ),
        vllm_op(
            "ggml_moe_a8_vec",
            signature="kernel(X: Tensor, W: Tensor, topk_ids: Tensor, top_k: int, "
                      "quant_type: int, row: int, tokens: int) -> Tensor",
            description=(
                "vLLM's ggml_moe_a8_vec (GGUF MoE decode, csrc/quantization/gguf moe_vec): "
                "X [tokens, col] (float32, float16 or bfloat16); W uint8 [experts, row, col / "
                "32 * block_bytes], one GGML matrix per expert; topk_ids int32 [tokens, "
                "top_k]. Returns a new [tokens * top_k, row] tensor of X's dtype whose row t "
                "* top_k + k is expert topk_ids[t, k]'s weights times X[t]: out[t * top_k + "
                "k, r] = (row r of W[topk_ids[t, k]]) . X[t], as vLLM computes it: "
                + Q8_1_RULE + "Inputs must be left unchanged."),
            reference=_moe_vec_reference, make_inputs=_moe_vec_inputs, cases=MOE_VEC_CASES,
            flops=lambda p: 2 * p["tokens"] * p["top_k"] * p["row"] * p["col"],
            bytes_moved=lambda p, size: p["experts"] * p["row"] * p["col"]
            * GGML_TYPES[p["type"]][1] / 32 + p["tokens"] * (p["col"] + p["top_k"] * p["row"])
            * size,
            tags=("gemm", "moe", "quant"), tolerances=GGML_MM_TOLERANCES,
            reference_kernel=lambda: _q8_1_kernel_text("ggml_moe_a8_vec", _MOE_WRAPPER),
            vllm_callable="vllm._custom_ops.ggml_moe_a8_vec",
        ),
    ]
