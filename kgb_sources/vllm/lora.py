"""vLLM's punica LoRA kernels (vllm/lora/ops/triton_ops/lora_shrink_op.py and
lora_expand_op.py, vLLM 0.13 argument order): per-token adapter choice through
token_lora_mapping (-1 = no LoRA), with the LoRAKernelMeta tensors vLLM derives from it
(tokens sorted by adapter, per-adapter counts and start offsets, the active adapter ids)
passed as vLLM passes them."""

from __future__ import annotations

from typing import Any, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.vllm._build import vllm_op

SHRINK_CASES = (
    ShapeCase("one_slice", {"tokens": 7, "hidden": 100, "rank": 8, "loras": 3, "slices": 1}),
    ShapeCase("qkv_slices", {"tokens": 9, "hidden": 64, "rank": 16, "loras": 2, "slices": 3}),
    ShapeCase("wide_hidden", {"tokens": 3, "hidden": 1100, "rank": 8, "loras": 2,
                              "slices": 1}),
    ShapeCase("heldout", {"tokens": 6, "hidden": 80, "rank": 4, "loras": 3, "slices": 2},
              heldout=True),
    ShapeCase("llama_qkv_prefill", {"tokens": 4096, "hidden": 4096, "rank": 16, "loras": 8,
                                    "slices": 3}, tier=LARGE),
    ShapeCase("llama_decode", {"tokens": 64, "hidden": 4096, "rank": 64, "loras": 4,
                               "slices": 2}, tier=LARGE),
)

EXPAND_CASES = (
    ShapeCase("one_slice_add", {"tokens": 7, "hidden": 100, "rank": 8, "loras": 3,
                                "slices": 1, "add_inputs": True, "offset": 0}),
    ShapeCase("qkv_slices", {"tokens": 9, "hidden": 48, "rank": 16, "loras": 2, "slices": 3,
                             "add_inputs": True, "offset": 0}),
    ShapeCase("offset_no_add", {"tokens": 5, "hidden": 70, "rank": 8, "loras": 2,
                                "slices": 1, "add_inputs": False, "offset": 30}),
    ShapeCase("heldout", {"tokens": 6, "hidden": 40, "rank": 4, "loras": 3, "slices": 2,
                          "add_inputs": True, "offset": 8}, heldout=True),
    ShapeCase("llama_qkv_prefill", {"tokens": 4096, "hidden": 4096, "rank": 16, "loras": 8,
                                    "slices": 3, "add_inputs": True, "offset": 0},
              tier=LARGE),
    ShapeCase("llama_mlp_decode", {"tokens": 64, "hidden": 14336, "rank": 64, "loras": 4,
                                   "slices": 2, "add_inputs": True, "offset": 0}, tier=LARGE),
)


def _meta(ctx: InputContext, tokens: int, loras: int) -> list[Any]:
    """token_lora_mapping and the LoRAKernelMeta tensors vLLM derives from it
    (vllm/lora/ops/triton_ops/lora_kernel_metadata.py, prepare_tensors)."""
    torch = ctx.torch
    mapping = torch.randint(-1, loras, (tokens,), generator=ctx.generator)
    mapping[0] = -1  # at least one token without LoRA
    sorted_ids = torch.sort(mapping, stable=True).indices
    ids, counts = torch.unique(mapping, sorted=True, return_counts=True)
    lora_ids = torch.full((loras + 1,), -1, dtype=torch.int64)
    lora_ids[:ids.numel()] = ids
    per_lora = torch.zeros(loras + 1, dtype=torch.int64)
    per_lora[:counts.numel()] = counts
    start_loc = torch.zeros(loras + 2, dtype=torch.int64)
    start_loc[1:1 + counts.numel()] = torch.cumsum(counts, 0)
    no_lora = torch.tensor([bool((mapping == -1).all())])
    i32, dev = torch.int32, ctx.device
    return [mapping.to(i32).to(dev), sorted_ids.to(i32).to(dev), per_lora.to(i32).to(dev),
            start_loc.to(i32).to(dev), lora_ids.to(i32).to(dev), no_lora]


def _shrink_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    t, h, r, n, s = p["tokens"], p["hidden"], p["rank"], p["loras"], p["slices"]
    torch = ctx.torch
    x = ctx.randn(t, h)
    weights = [ctx.randn(n, r, h, scale=0.1) for _ in range(s)]
    out = ctx.randn(s, t, r, dtype=torch.float32, scale=100.0)
    return [x, weights, out, *_meta(ctx, t, n), 0.5]


def _shrink_reference(inputs, lora_a_weights, output_tensor, token_lora_mapping,
                      token_indices_sorted_by_lora_ids, num_tokens_per_lora,
                      lora_token_start_loc, lora_ids, no_lora_flag_cpu, scaling):  # noqa: ANN001, ANN202
    x = inputs.float()
    for slot, weights in enumerate(lora_a_weights):
        w = weights.float()
        for token, lora in enumerate(token_lora_mapping.tolist()):
            if lora >= 0:
                output_tensor[slot, token] = scaling * (w[lora] @ x[token])


def _shrink_compared(_returned: Any, args: Sequence[Any]) -> Any:
    """output_tensor with the rows of tokens without LoRA zeroed: vLLM may skip or clear
    them (the caller zeroes the buffer), so they are not compared."""
    import torch

    out, mapping = args[2], args[3]
    keep = (mapping >= 0)[None, :, None]
    return torch.where(keep, out, torch.zeros_like(out))


def _expand_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    t, h, r, n, s = p["tokens"], p["hidden"], p["rank"], p["loras"], p["slices"]
    torch = ctx.torch
    x = ctx.randn(s, t, r, dtype=torch.float32)
    weights = [ctx.randn(n, h, r, scale=0.1) for _ in range(s)]
    out = ctx.randn(t, p["offset"] + s * h + 3)
    return [x, weights, out, *_meta(ctx, t, n), int(p["offset"]), bool(p["add_inputs"])]


def _expand_reference(inputs, lora_b_weights, output_tensor, token_lora_mapping,
                      token_indices_sorted_by_lora_ids, num_tokens_per_lora,
                      lora_token_start_loc, lora_ids, no_lora_flag_cpu, offset_start,
                      add_inputs):  # noqa: ANN001, ANN202
    x = inputs.float()
    col = offset_start
    for slot, weights in enumerate(lora_b_weights):
        w = weights.float()
        width = w.shape[1]
        for token, lora in enumerate(token_lora_mapping.tolist()):
            if lora >= 0:
                y = w[lora] @ x[slot, token]
                if add_inputs:
                    y = y + output_tensor[token, col:col + width].float()
                output_tensor[token, col:col + width] = y.to(output_tensor.dtype)
        col += width


_META_SIG = ("token_lora_mapping: Tensor, token_indices_sorted_by_lora_ids: Tensor, "
             "num_tokens_per_lora: Tensor, lora_token_start_loc: Tensor, lora_ids: Tensor, "
             "no_lora_flag_cpu: Tensor")
_META_DOC = ("token_lora_mapping int32 [num_tokens]: each token's adapter, -1 = no LoRA; "
             "the other metadata are derived from it as vLLM's LoRAKernelMeta does and may "
             "be used or ignored: token_indices_sorted_by_lora_ids (stable argsort of the "
             "mapping), lora_ids (the distinct mapping values in ascending order, -1 "
             "included, padded with -1 to max_loras + 1), num_tokens_per_lora (their counts), "
             "lora_token_start_loc (0 then the cumsum of the counts), no_lora_flag_cpu (bool "
             "[1], on the CPU: no token has an adapter). Only the output is written.")


def operators() -> list[OperatorSpec]:
    return [
        vllm_op(
            "lora_shrink",
            signature="kernel(inputs: Tensor, lora_a_weights: list[Tensor], "
                      f"output_tensor: Tensor, {_META_SIG}, scaling: float) -> None",
            description="Punica LoRA shrink: for every slice s and token t with adapter "
                        "l = token_lora_mapping[t] >= 0, output_tensor[s, t, :] = scaling * "
                        "lora_a_weights[s][l] @ inputs[t] (accumulated in float32). inputs "
                        "[num_tokens, hidden] (float32, float16 or bfloat16); lora_a_weights "
                        "a list of num_slices tensors [max_loras, rank, hidden] of that "
                        "dtype; output_tensor float32 [num_slices, num_tokens, rank], written "
                        "(not accumulated). Rows of tokens without LoRA are not compared. "
                        + _META_DOC,
            reference=_shrink_reference,
            make_inputs=_shrink_inputs,
            cases=SHRINK_CASES,
            flops=lambda p: 2 * p["slices"] * p["tokens"] * p["rank"] * p["hidden"],
            bytes_moved=lambda p, size: (p["tokens"] * p["hidden"] + p["slices"] * p["loras"]
                                         * p["rank"] * p["hidden"]) * size
            + 4 * p["slices"] * p["tokens"] * p["rank"],
            reduce_dim=lambda p: p["hidden"],
            tags=("lora", "gemm", "out_param"),
            mutated_args=(2,),
            compared=_shrink_compared,
            vllm_callable="vllm.lora.ops.triton_ops.lora_shrink",
        ),
        vllm_op(
            "lora_expand",
            signature="kernel(inputs: Tensor, lora_b_weights: list[Tensor], "
                      f"output_tensor: Tensor, {_META_SIG}, offset_start: int, "
                      "add_inputs: bool) -> None",
            description="Punica LoRA expand: slice s covers output columns offset_start + "
                        "s * hidden ... + hidden (slices laid side by side); for every token "
                        "t with adapter l = token_lora_mapping[t] >= 0, y = "
                        "lora_b_weights[s][l] @ inputs[s, t, :] in float32, plus the current "
                        "output_tensor values of those columns when add_inputs, rounded once "
                        "into output_tensor[t, columns]. inputs float32 [num_slices, "
                        "num_tokens, rank]; lora_b_weights a list of num_slices tensors "
                        "[max_loras, hidden, rank] in output_tensor's dtype (float32, float16 "
                        "or bfloat16); output_tensor [num_tokens, total_columns]: every "
                        "column outside the slices and every row of a token without LoRA "
                        "must stay as it was. " + _META_DOC,
            reference=_expand_reference,
            make_inputs=_expand_inputs,
            cases=EXPAND_CASES,
            flops=lambda p: 2 * p["slices"] * p["tokens"] * p["rank"] * p["hidden"],
            bytes_moved=lambda p, size: (2 * p["tokens"] * p["slices"] * p["hidden"]
                                         + p["slices"] * p["loras"] * p["rank"] * p["hidden"])
            * size + 4 * p["slices"] * p["tokens"] * p["rank"],
            reduce_dim=lambda p: p["rank"],
            tags=("lora", "gemm", "inplace"),
            mutated_args=(2,),
            vllm_callable="vllm.lora.ops.triton_ops.lora_expand",
        ),
    ]
