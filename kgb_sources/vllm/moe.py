"""vLLM's MoE routing and data-movement ops (csrc/moe/, vLLM 0.13 semantics).

Routing outputs are integers and are compared exactly, under the op's own tie and padding
rules: topk_softmax breaks ties towards the lower expert index (its warp argmax keeps the
lower index on equal values); moe_align_block_size pads every expert's segment to a multiple
of block_size with the sentinel numel(topk_ids), and since vLLM fills a segment with atomics
(count_and_sort_expert_tokens_kernel), the order of token ids inside a segment is not
defined: they are compared as each segment's sorted contents.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.vllm._build import vllm_op

_INT = ("int32",)


def _garbage_int(ctx: InputContext, *shape: int) -> Any:
    """An int32 out-parameter full of values no right answer has everywhere."""
    torch = ctx.torch
    return ctx.randint(*shape, low=-(2 ** 20), high=2 ** 20, dtype=torch.int32)


# -- topk_softmax -------------------------------------------------------------------------

TOPK_SOFTMAX_CASES = (
    ShapeCase("mixtral_like", {"tokens": 5, "experts": 8, "topk": 2, "renormalize": False}),
    ShapeCase("qwen_moe_ties", {"tokens": 9, "experts": 60, "topk": 4, "renormalize": True}),
    ShapeCase("e64_top6", {"tokens": 3, "experts": 64, "topk": 6, "renormalize": True}),
    ShapeCase("e128_top8", {"tokens": 2, "experts": 128, "topk": 8, "renormalize": False}),
    ShapeCase("heldout", {"tokens": 4, "experts": 16, "topk": 3, "renormalize": True},
              heldout=True),
    ShapeCase("mixtral_prefill", {"tokens": 4096, "experts": 8, "topk": 2,
                                  "renormalize": True}, tier=LARGE),
    ShapeCase("qwen3_moe_prefill", {"tokens": 4096, "experts": 128, "topk": 8,
                                    "renormalize": True}, tier=LARGE),
)


def _topk_softmax_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    t, e, k = p["tokens"], p["experts"], p["topk"]
    torch = ctx.torch
    # Logits on a 1/4 grid over a narrow range: many exact ties, so the tie rule is checked.
    grid = ctx.randint(t, e, low=-6, high=7).to(torch.float32) / 4
    gating = grid.to(ctx.dtype)
    weights = ctx.randn(t, k, dtype=torch.float32, scale=100.0)
    return [weights, _garbage_int(ctx, t, k), _garbage_int(ctx, t, k), gating,
            bool(p["renormalize"])]


def _topk_softmax_reference(topk_weights, topk_indices, token_expert_indices, gating_output,
                            renormalize):  # noqa: ANN001, ANN202
    import torch

    probs = torch.softmax(gating_output.float(), dim=-1)
    k = topk_weights.shape[1]
    # A stable descending sort keeps equal values in index order: lowest expert first.
    order = torch.sort(probs, dim=-1, descending=True, stable=True).indices[:, :k]
    weights = probs.gather(1, order)
    if renormalize:
        total = weights.sum(dim=-1, keepdim=True)
        weights = weights / torch.where(total > 0, total, torch.ones_like(total))
    tokens = gating_output.shape[0]
    topk_weights.copy_(weights)
    topk_indices.copy_(order.to(topk_indices.dtype))
    slots = (torch.arange(k, device=order.device)[None, :] * tokens
             + torch.arange(tokens, device=order.device)[:, None])
    token_expert_indices.copy_(slots.to(token_expert_indices.dtype))


# -- moe_align_block_size ------------------------------------------------------------------

ALIGN_CASES = (
    ShapeCase("few_tokens", {"tokens": 3, "topk": 2, "experts": 8, "block_size": 4}),
    ShapeCase("odd_tokens", {"tokens": 37, "topk": 4, "experts": 16, "block_size": 16}),
    ShapeCase("unused_experts", {"tokens": 5, "topk": 2, "experts": 40, "block_size": 16}),
    ShapeCase("e48_top8", {"tokens": 9, "topk": 8, "experts": 48, "block_size": 32}),
    ShapeCase("heldout", {"tokens": 13, "topk": 3, "experts": 12, "block_size": 8},
              heldout=True),
    ShapeCase("deepseek_prefill", {"tokens": 4096, "topk": 8, "experts": 256,
                                   "block_size": 64}, tier=LARGE),
    ShapeCase("mixtral_decode", {"tokens": 256, "topk": 2, "experts": 8, "block_size": 16},
              tier=LARGE),
)


def _align_sizes(p: Mapping[str, Any]) -> tuple[int, int, int]:
    """numel, sorted_token_ids length and expert_ids length as vLLM's wrapper allocates them
    (fused_moe/moe_align_block_size.py: numel + num_experts * (block_size - 1))."""
    numel = p["tokens"] * p["topk"]
    padded = numel + p["experts"] * (p["block_size"] - 1)
    return numel, padded, -(-padded // p["block_size"])


def _routing_ids(ctx: InputContext, tokens: int, experts: int, topk: int) -> Any:
    """topk_ids: each token's distinct experts, drawn from the seed (int32, as vLLM's
    routers return them)."""
    torch = ctx.torch
    scores = torch.rand((tokens, experts), generator=ctx.generator)
    ids = scores.topk(topk, dim=-1).indices
    return ids.to(torch.int32).to(ctx.device)


def _align_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    _, padded, blocks = _align_sizes(p)
    ids = _routing_ids(ctx, p["tokens"], p["experts"], p["topk"])
    return [ids, int(p["experts"]), int(p["block_size"]), _garbage_int(ctx, padded),
            _garbage_int(ctx, blocks), _garbage_int(ctx, 1)]


def _align_reference(topk_ids, num_experts, block_size, sorted_token_ids, experts_ids,
                     num_tokens_post_pad):  # noqa: ANN001, ANN202
    import torch

    flat = topk_ids.reshape(-1).long()
    numel = flat.numel()
    counts = torch.bincount(flat, minlength=num_experts)[:num_experts]
    padded = (counts + block_size - 1) // block_size * block_size
    starts = torch.cumsum(padded, 0) - padded
    sorted_ids = torch.full((sorted_token_ids.numel(),), numel, dtype=torch.int64,
                            device=flat.device)
    blocks = torch.zeros(experts_ids.numel(), dtype=torch.int64, device=flat.device)
    for expert in range(num_experts):
        start, count = int(starts[expert]), int(counts[expert])
        sorted_ids[start:start + count] = (flat == expert).nonzero().reshape(-1)
        blocks[start // block_size:(start + int(padded[expert])) // block_size] = expert
    sorted_token_ids.copy_(sorted_ids.to(sorted_token_ids.dtype))
    experts_ids.copy_(blocks.to(experts_ids.dtype))
    num_tokens_post_pad.fill_(int(padded.sum()))


def _align_compared(_returned: Any, args: Sequence[Any]) -> Any:
    """What is compared: num_tokens_post_pad; expert_ids of the blocks in use (vLLM leaves
    the rest as filler); sorted_token_ids with each expert segment's contents sorted (the
    order inside a segment comes from atomics in vLLM), and the tail past
    num_tokens_post_pad, which must hold the sentinel numel(topk_ids)."""
    import torch

    topk_ids, _, block_size, sorted_ids, expert_ids, post_pad = args[:6]
    total = int(post_pad.reshape(-1)[0])
    if not (0 <= total <= sorted_ids.numel() and total % block_size == 0
            and total // block_size <= expert_ids.numel()):
        return (post_pad.clone(), sorted_ids.clone(), expert_ids.clone())
    used = expert_ids[:total // block_size].long()
    owner = used.repeat_interleave(block_size)
    head = sorted_ids[:total].long()
    key = owner * (topk_ids.numel() + 1 + 2 ** 21) + head.clamp(-2 ** 20, 2 ** 20) + 2 ** 20
    order = torch.argsort(key, stable=True)
    view = torch.cat([head[order], sorted_ids[total:].long()])
    return (post_pad.clone(), used.clone(), view)


# -- batched_moe_align_block_size ---------------------------------------------------------

BATCHED_ALIGN_CASES = (
    ShapeCase("three_batches", {"batches": 3, "max_tokens_per_batch": 16, "block_size": 8}),
    ShapeCase("empty_batches", {"batches": 9, "max_tokens_per_batch": 32, "block_size": 16,
                                "empty": True}),
    ShapeCase("one_block", {"batches": 5, "max_tokens_per_batch": 16, "block_size": 16}),
    ShapeCase("heldout", {"batches": 7, "max_tokens_per_batch": 24, "block_size": 8},
              heldout=True),
    ShapeCase("ep_experts", {"batches": 32, "max_tokens_per_batch": 512, "block_size": 64},
              tier=LARGE),
)


def _batched_align_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    b, m, bs = p["batches"], p["max_tokens_per_batch"], p["block_size"]
    torch = ctx.torch
    counts = ctx.randint(b, low=0, high=m + 1, dtype=torch.int32)
    if p.get("empty"):
        counts[::3] = 0
    size = max(m, bs) * b
    return [int(m), int(bs), counts, _garbage_int(ctx, size), _garbage_int(ctx, size // bs),
            _garbage_int(ctx, 1)]


def _batched_align_reference(max_tokens_per_batch, block_size, expert_num_tokens, sorted_ids,
                             expert_ids, num_tokens_post_pad):  # noqa: ANN001, ANN202
    import torch

    batches = expert_num_tokens.numel()
    sentinel = batches * max_tokens_per_batch
    out_ids = torch.full((sorted_ids.numel(),), sentinel, dtype=torch.int64)
    out_blocks = torch.full((expert_ids.numel(),), -1, dtype=torch.int64)
    offset = 0
    for batch, count in enumerate(expert_num_tokens.tolist()):
        out_ids[offset:offset + count] = torch.arange(count) + batch * max_tokens_per_batch
        ceil = -(-count // block_size) * block_size
        out_blocks[offset // block_size:(offset + ceil) // block_size] = batch
        offset += ceil
    sorted_ids.copy_(out_ids.to(sorted_ids.dtype))
    expert_ids.copy_(out_blocks.to(expert_ids.dtype))
    num_tokens_post_pad.fill_(offset)


# -- moe_lora_align_block_size ------------------------------------------------------------

LORA_ALIGN_CASES = (
    ShapeCase("two_loras", {"tokens": 9, "topk": 2, "experts": 8, "block_size": 4,
                            "max_loras": 2}),
    ShapeCase("disabled_and_empty_slots", {"tokens": 13, "topk": 4, "experts": 16,
                                           "block_size": 16, "max_loras": 4,
                                           "disabled": 2, "empty_slot": 3}),
    ShapeCase("unmapped_tokens", {"tokens": 11, "topk": 2, "experts": 40, "block_size": 16,
                                  "max_loras": 3, "unmapped": True}),
    ShapeCase("e64_top8", {"tokens": 7, "topk": 8, "experts": 64, "block_size": 32,
                           "max_loras": 2}),
    ShapeCase("heldout", {"tokens": 10, "topk": 3, "experts": 12, "block_size": 8,
                          "max_loras": 3, "disabled": 0}, heldout=True),
    ShapeCase("qwen3_moe_lora_prefill", {"tokens": 2048, "topk": 8, "experts": 128,
                                         "block_size": 64, "max_loras": 4}, tier=LARGE),
    ShapeCase("mixtral_lora_decode", {"tokens": 256, "topk": 2, "experts": 8,
                                      "block_size": 16, "max_loras": 8}, tier=LARGE),
)


def _lora_align_sizes(p: Mapping[str, Any]) -> tuple[int, int]:
    """max_num_tokens_padded and max_num_m_blocks as vLLM's fused-MoE LoRA path allocates them
    (numel + num_experts * (block_size - 1), and its ceiling in blocks)."""
    padded = p["tokens"] * p["topk"] + p["experts"] * (p["block_size"] - 1)
    return padded, -(-padded // p["block_size"])


def _lora_align_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    loras = p["max_loras"]
    padded, blocks = _lora_align_sizes(p)
    ids = _routing_ids(ctx, p["tokens"], p["experts"], p["topk"])
    mapping = ctx.randint(p["tokens"], low=-1 if p.get("unmapped") else 0, high=loras,
                          dtype=torch.int32)
    adapter_enabled = torch.ones(loras, dtype=torch.int32, device=ctx.device)
    if p.get("disabled") is not None:
        adapter_enabled[p["disabled"]] = 0
    # Slot s of the launch serves LoRA lora_ids[s]; slots are shuffled so slot != id.
    lora_ids = torch.randperm(loras, generator=ctx.generator).to(torch.int32).to(ctx.device)
    if p.get("empty_slot") is not None:
        lora_ids[p["empty_slot"]] = -1
    return [ids, mapping, int(p["experts"]), int(p["block_size"]), int(loras), int(padded),
            int(blocks), _garbage_int(ctx, loras * padded), _garbage_int(ctx, loras * blocks),
            _garbage_int(ctx, loras), adapter_enabled, lora_ids]


def _active_loras(adapter_enabled, lora_ids) -> list[int]:  # noqa: ANN001
    return [int(i) for i in lora_ids.tolist() if i != -1 and int(adapter_enabled[i]) != 0]


def _lora_align_reference(topk_ids, token_lora_mapping, num_experts, block_size, max_loras,  # noqa: ANN001, ANN202
                          max_num_tokens_padded, max_num_m_blocks, sorted_token_ids,  # noqa: ANN001
                          experts_ids, num_tokens_post_pad, adapter_enabled, lora_ids):  # noqa: ANN001
    import torch

    flat = topk_ids.reshape(-1).long()
    numel, topk = flat.numel(), topk_ids.shape[1]
    slot_lora = token_lora_mapping.long().repeat_interleave(topk)
    sorted_rows = sorted_token_ids.view(max_loras, max_num_tokens_padded)
    block_rows = experts_ids.view(max_loras, max_num_m_blocks)
    for lora in _active_loras(adapter_enabled, lora_ids):
        mine = slot_lora == lora
        counts = torch.bincount(flat[mine], minlength=num_experts)[:num_experts]
        padded = (counts + block_size - 1) // block_size * block_size
        starts = torch.cumsum(padded, 0) - padded
        row = torch.full((max_num_tokens_padded,), numel, dtype=torch.int64)
        blocks = torch.full((max_num_m_blocks,), -1, dtype=torch.int64)
        for expert in range(num_experts):
            start, count = int(starts[expert]), int(counts[expert])
            row[start:start + count] = (mine & (flat == expert)).nonzero().reshape(-1).cpu()
            blocks[start // block_size:(start + int(padded[expert])) // block_size] = expert
        sorted_rows[lora].copy_(row.to(sorted_token_ids.dtype))
        block_rows[lora].copy_(blocks.to(experts_ids.dtype))
        num_tokens_post_pad[lora] = int(padded.sum())


def _lora_align_compared(_returned: Any, args: Sequence[Any]) -> Any:
    """Per LoRA row: for an active LoRA, num_tokens_post_pad, its expert_ids row (owners of the
    used blocks, -1 after them) and its sorted_token_ids row with each expert segment's
    contents sorted (vLLM fills a segment with atomics) and the sentinel tail; for a LoRA slot
    the launch skips (lora_ids -1 or adapter disabled), the rows exactly as they were."""
    import torch

    (topk_ids, _, _, block_size, max_loras, padded_len, blocks_len, sorted_ids, expert_ids,
     post_pad, adapter_enabled, lora_ids) = args
    numel = topk_ids.numel()
    active = set(_active_loras(adapter_enabled, lora_ids))
    sorted_rows = sorted_ids.view(max_loras, padded_len).long()
    block_rows = expert_ids.view(max_loras, blocks_len).long()
    views = [post_pad.clone()]
    for lora in range(max_loras):
        sorted_row, block_row = sorted_rows[lora], block_rows[lora]
        total = int(post_pad[lora])
        if lora not in active or not (0 <= total <= padded_len and total % block_size == 0):
            views += [sorted_row.clone(), block_row.clone()]
            continue
        owner = block_row[:total // block_size].repeat_interleave(block_size)
        head = sorted_row[:total]
        key = owner * (numel + 1 + 2 ** 21) + head.clamp(-2 ** 20, 2 ** 20) + 2 ** 20
        order = torch.argsort(key, stable=True)
        views += [torch.cat([head[order], sorted_row[total:]]), block_row.clone()]
    return views


# -- moe_sum --------------------------------------------------------------------------------

MOE_SUM_CASES = (
    ShapeCase("top2", {"tokens": 7, "topk": 2, "hidden": 129}),
    ShapeCase("top3_wide", {"tokens": 3, "topk": 3, "hidden": 1100}),
    ShapeCase("top8", {"tokens": 5, "topk": 8, "hidden": 200}),
    ShapeCase("heldout", {"tokens": 6, "topk": 4, "hidden": 77}, heldout=True),
    ShapeCase("mixtral_prefill", {"tokens": 4096, "topk": 2, "hidden": 4096}, tier=LARGE),
    ShapeCase("deepseek_prefill", {"tokens": 1024, "topk": 8, "hidden": 7168}, tier=LARGE),
)


def _moe_sum_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    return [ctx.randn(p["tokens"], p["topk"], p["hidden"]),
            ctx.randn(p["tokens"], p["hidden"], scale=50.0)]


def _moe_sum_reference(input, output):  # noqa: A002, ANN001, ANN202
    output.copy_(input.float().sum(dim=1).to(output.dtype))


# -- shuffle_rows ---------------------------------------------------------------------------

SHUFFLE_CASES = (
    ShapeCase("expand_top2", {"rows": 5, "hidden": 129, "out_rows": 10}),
    ShapeCase("wide", {"rows": 3, "hidden": 1500, "out_rows": 5}),
    ShapeCase("subset", {"rows": 40, "hidden": 64, "out_rows": 9}),
    ShapeCase("heldout", {"rows": 11, "hidden": 100, "out_rows": 12}, heldout=True),
    ShapeCase("deepseek_permute", {"rows": 2048, "hidden": 7168, "out_rows": 16384},
              tier=LARGE),
)


def _shuffle_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    torch = ctx.torch
    dst2src = ctx.randint(p["out_rows"], low=0, high=p["rows"], dtype=torch.int32)
    return [ctx.randn(p["rows"], p["hidden"]), dst2src]


def _shuffle_reference(input_tensor, dst2src_map):  # noqa: ANN001, ANN202
    return input_tensor[dst2src_map.long()].clone()


# -- permute_cols ---------------------------------------------------------------------------

PERMUTE_CASES = (
    ShapeCase("small", {"rows": 5, "cols": 24}),
    ShapeCase("odd_rows", {"rows": 13, "cols": 136}),
    ShapeCase("wide", {"rows": 2, "cols": 1544}),
    ShapeCase("heldout", {"rows": 9, "cols": 200}, heldout=True),
    ShapeCase("gptq_act_order", {"rows": 4096, "cols": 4096}, tier=LARGE),
    ShapeCase("gptq_down_proj", {"rows": 1024, "cols": 14336}, tier=LARGE),
)


def _permute_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    torch = ctx.torch
    perm = torch.randperm(p["cols"], generator=ctx.generator).to(torch.int32).to(ctx.device)
    return [ctx.randn(p["rows"], p["cols"]), perm]


def _permute_reference(a, perm):  # noqa: ANN001, ANN202
    return a[..., perm.long()].contiguous()


# -- grouped_topk ---------------------------------------------------------------------------

GROUPED_CASES = (
    ShapeCase("e16_g4", {"tokens": 3, "experts": 16, "groups": 4, "topk_group": 2, "topk": 3,
                         "renormalize": True, "scale": 2.5}),
    ShapeCase("e32_g8_norenorm", {"tokens": 4, "experts": 32, "groups": 8, "topk_group": 3,
                                  "topk": 4, "renormalize": False, "scale": 1.0}),
    ShapeCase("deepseek_v3_shape", {"tokens": 2, "experts": 256, "groups": 8,
                                    "topk_group": 4, "topk": 8, "renormalize": True,
                                    "scale": 2.5}),
    ShapeCase("heldout", {"tokens": 3, "experts": 64, "groups": 8, "topk_group": 2,
                          "topk": 6, "renormalize": True, "scale": 1.5}, heldout=True),
    ShapeCase("deepseek_v3_prefill", {"tokens": 4096, "experts": 256, "groups": 8,
                                      "topk_group": 4, "topk": 8, "renormalize": True,
                                      "scale": 2.5}, tier=LARGE),
)


# Smallest gap between two biased scores of a row, and between two of its group scores, that
# the inputs keep: eight float32 ulps at 2, above what another exp and summation order move
# sigmoid(s) + bias by (the H200 flipped pairs closer than about 1e-7), so every correct
# kernel selects the same experts; a row of 256 experts has gaps this small in a few % of draws.
GROUPED_MIN_GAP = 2e-6


def _grouped_logits(ctx: InputContext, tokens: int, experts: int) -> Any:
    torch = ctx.torch
    grid = torch.stack([torch.randperm(experts, generator=ctx.generator)
                        for _ in range(tokens)])
    return ((grid.to(torch.float32) - experts / 2) * (8.0 / experts)).to(ctx.dtype)


def _near_tie_rows(logits: Any, bias: Any, groups: int) -> Any:
    """Rows where two biased scores, or two group scores, lie closer than GROUPED_MIN_GAP."""
    biased = logits.float().sigmoid() + bias.float()[None, :]
    tokens, experts = biased.shape
    group_scores = biased.view(tokens, groups, experts // groups).topk(2, dim=-1).values.sum(-1)
    return ((biased.sort(dim=-1).values.diff(dim=-1).min(dim=-1).values < GROUPED_MIN_GAP)
            | (group_scores.sort(dim=-1).values.diff(dim=-1).min(dim=-1).values
               < GROUPED_MIN_GAP))


def _grouped_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    t, e = p["tokens"], p["experts"]
    # Each row a permutation of distinct grid values (exact in fp16 and bf16); rows where the
    # bias brings two biased or group scores within GROUPED_MIN_GAP are drawn again, so the
    # selection has one right answer (at 4096 tokens, plain draws had near-ties that the
    # H200's sigmoid resolved the other way).
    bias = ctx.randn(e, scale=0.3).cpu()
    logits = _grouped_logits(ctx, t, e)
    for _ in range(100):
        again = _near_tie_rows(logits, bias, int(p["groups"])).nonzero().flatten()
        if again.numel() == 0:
            break
        logits[again] = _grouped_logits(ctx, again.numel(), e)
    else:
        raise RuntimeError("grouped_topk inputs: near-ties after 100 redraws")
    return [logits.to(ctx.device), int(p["groups"]), int(p["topk_group"]), int(p["topk"]),
            bool(p["renormalize"]), float(p["scale"]), bias.to(ctx.device), 1]


def _grouped_reference(scores, num_expert_group, topk_group, topk, renormalize,
                       routed_scaling_factor, bias, scoring_func):  # noqa: ANN001, ANN202
    import torch

    s = scores.float()
    if scoring_func == 1:
        s = torch.sigmoid(s)
    biased = s + bias.float()[None, :]
    tokens, experts = s.shape
    per_group = biased.view(tokens, num_expert_group, experts // num_expert_group)
    group_scores = per_group.topk(2, dim=-1).values.sum(dim=-1)
    groups = group_scores.topk(topk_group, dim=-1).indices
    keep = torch.zeros_like(group_scores, dtype=torch.bool).scatter_(1, groups, True)
    keep = keep[:, :, None].expand_as(per_group).reshape(tokens, experts)
    masked = biased.masked_fill(~keep, float("-inf"))
    ids = masked.topk(topk, dim=-1).indices
    weights = s.gather(1, ids)
    if renormalize:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    weights = weights * routed_scaling_factor
    return weights.float(), ids.to(torch.int32)


def _grouped_compared(returned: Any, _args: Sequence[Any]) -> Any:
    """Each row's (expert id, weight) pairs sorted by expert id: the op's order within a row
    is its own (a warp top-k), the set of experts and their weights are the contract."""
    import torch

    if not (isinstance(returned, (tuple, list)) and len(returned) == 2
            and all(isinstance(t, torch.Tensor) for t in returned)
            and returned[0].shape == returned[1].shape and returned[0].dim() == 2):
        return returned
    weights, ids = returned
    order = torch.argsort(ids.long(), dim=-1, stable=True)
    return weights.gather(1, order), ids.gather(1, order)


# -- fused_moe ------------------------------------------------------------------------------

FUSED_MOE_CASES = (
    ShapeCase("e4_top2", {"tokens": 3, "hidden": 64, "inter": 32, "experts": 4, "topk": 2}),
    ShapeCase("odd_sizes", {"tokens": 2, "hidden": 72, "inter": 24, "experts": 8,
                            "topk": 3}),
    ShapeCase("one_token_top4", {"tokens": 1, "hidden": 48, "inter": 40, "experts": 6,
                                 "topk": 4}),
    ShapeCase("heldout", {"tokens": 3, "hidden": 40, "inter": 24, "experts": 5, "topk": 2},
              heldout=True),
    ShapeCase("qwen3_30b_a3b", {"tokens": 512, "hidden": 2048, "inter": 768, "experts": 128,
                                "topk": 8}, tier=LARGE),
    ShapeCase("mixtral_tp8", {"tokens": 1024, "hidden": 4096, "inter": 1792, "experts": 8,
                              "topk": 2}, tier=LARGE),
)


def _fused_moe_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    m, k, n, e, topk = p["tokens"], p["hidden"], p["inter"], p["experts"], p["topk"]
    torch = ctx.torch
    x = ctx.randn(m, k)
    w1 = ctx.randn(e, 2 * n, k, scale=k ** -0.5)
    w2 = ctx.randn(e, k, n, scale=n ** -0.5)
    ids = _routing_ids(ctx, m, e, topk)
    weights = torch.softmax(ctx.randn(m, topk, dtype=torch.float32), dim=-1)
    return [x, w1, w2, weights, ids]


def _fused_moe_reference(hidden_states, w1, w2, topk_weights, topk_ids):  # noqa: ANN001, ANN202
    import torch

    dtype = hidden_states.dtype
    m, topk = topk_ids.shape
    n = w2.shape[2]
    out = torch.zeros((m, hidden_states.shape[1]), dtype=torch.float32,
                      device=hidden_states.device)
    x = hidden_states.float()
    for expert in torch.unique(topk_ids).tolist():
        rows, slots = (topk_ids == expert).nonzero(as_tuple=True)
        # vLLM's fused_experts rounds the gate/up GEMM output, the silu_and_mul output and
        # the weighted down GEMM output to the activation dtype (its intermediate caches).
        h = (x[rows] @ w1[expert].float().T).to(dtype).float()
        act = (torch.nn.functional.silu(h[:, :n]) * h[:, n:]).to(dtype).float()
        y = act @ w2[expert].float().T
        y = (y * topk_weights[rows, slots].float()[:, None]).to(dtype).float()
        out.index_add_(0, rows, y)
    return out.to(dtype)


def operators() -> list[OperatorSpec]:
    return [
        vllm_op(
            "topk_softmax",
            signature="kernel(topk_weights: Tensor, topk_indices: Tensor, "
                      "token_expert_indices: Tensor, gating_output: Tensor, "
                      "renormalize: bool) -> None",
            description="MoE router: softmax over the experts of each token's gating "
                        "logits gating_output [num_tokens, num_experts] (float32, float16 or "
                        "bfloat16; softmax computed in float32), then the top-k experts. "
                        "Writes three out-parameters of shape [num_tokens, topk]: "
                        "topk_weights (float32) = the chosen softmax probabilities, largest "
                        "first, divided by their sum when renormalize is True; topk_indices "
                        "(int32) = the chosen expert ids, in the same order; "
                        "token_expert_indices (int32) = k * num_tokens + token for entry "
                        "[token, k]. Ties: among equal probabilities the lower expert index "
                        "is chosen first (the logits here have many exact ties). gating_output "
                        "must be left unchanged. Indices are compared exactly.",
            reference=_topk_softmax_reference,
            make_inputs=_topk_softmax_inputs,
            cases=TOPK_SOFTMAX_CASES,
            flops=lambda p: p["tokens"] * p["experts"] * (4 + p["topk"]),
            bytes_moved=lambda p, size: p["tokens"] * (p["experts"] * size + 12 * p["topk"]),
            tags=("moe", "routing", "out_param"),
            mutated_args=(0, 1, 2),
            vllm_callable="vllm._custom_ops.topk_softmax",
        ),
        vllm_op(
            "moe_align_block_size",
            signature="kernel(topk_ids: Tensor, num_experts: int, block_size: int, "
                      "sorted_token_ids: Tensor, experts_ids: Tensor, "
                      "num_tokens_post_pad: Tensor) -> None",
            description="Group the (token, k) slots of topk_ids [num_tokens, topk] (int32 "
                        "expert ids) by expert for a block-wise MoE GEMM. With flat index "
                        "i over topk_ids.flatten() and numel = topk_ids.numel(): expert e's "
                        "segment holds the flat indices i with topk_ids[i] == e, padded with "
                        "the sentinel value numel up to a multiple of block_size (an expert "
                        "with no tokens gets no segment); segments follow in expert order "
                        "0, 1, ... from position 0. Writes sorted_token_ids (int32, length "
                        "numel + num_experts * (block_size - 1)): the segments, then numel "
                        "in every remaining slot; experts_ids (int32, one per block of "
                        "block_size slots): the expert owning each block of the segments "
                        "(blocks past the segments are not compared); num_tokens_post_pad "
                        "(int32 [1]): the total padded length. The order of flat indices "
                        "inside one segment is free (compared as a sorted set, since vLLM "
                        "fills it with atomics); all else is compared exactly.",
            reference=_align_reference,
            make_inputs=_align_inputs,
            cases=ALIGN_CASES,
            dtypes=_INT,
            flops=lambda p: 2 * p["tokens"] * p["topk"],
            bytes_moved=lambda p, size: 4 * (_align_sizes(p)[0] + _align_sizes(p)[1]
                                             + _align_sizes(p)[2]),
            tags=("moe", "routing", "out_param"),
            mutated_args=(3, 4, 5),
            compared=_align_compared,
            vllm_callable="vllm._custom_ops.moe_align_block_size",
        ),
        vllm_op(
            "moe_lora_align_block_size",
            signature="kernel(topk_ids: Tensor, token_lora_mapping: Tensor, num_experts: int, "
                      "block_size: int, max_loras: int, max_num_tokens_padded: int, "
                      "max_num_m_blocks: int, sorted_token_ids: Tensor, experts_ids: Tensor, "
                      "num_tokens_post_pad: Tensor, adapter_enabled: Tensor, "
                      "lora_ids: Tensor) -> None",
            description="vLLM's moe_lora_align_block_size (csrc/moe/, used by the fused-MoE "
                        "LoRA path): moe_align_block_size done separately for each LoRA "
                        "adapter, over the (token, k) slots of the tokens that adapter serves. "
                        "topk_ids [num_tokens, topk] int32 expert ids; token_lora_mapping "
                        "[num_tokens] int32, the adapter of each token (-1: none); "
                        "adapter_enabled int32 [max_loras] (0 = disabled); lora_ids int32 "
                        "[max_loras]: launch slot s serves adapter lora_ids[s] (-1: an empty "
                        "slot). An adapter L is processed when it appears in lora_ids and "
                        "adapter_enabled[L] != 0. The out-parameters are flat int32 tensors "
                        "holding one row per adapter id L: sorted_token_ids [max_loras * "
                        "max_num_tokens_padded], experts_ids [max_loras * max_num_m_blocks], "
                        "num_tokens_post_pad [max_loras]. For a processed adapter L, with "
                        "flat slot index i over topk_ids.flatten(), numel = topk_ids.numel(), "
                        "counting only the slots i with token_lora_mapping[i // topk] == L: "
                        "expert e's segment holds those i with topk_ids[i] == e, padded with "
                        "the sentinel numel to a multiple of block_size (no segment for an "
                        "expert without slots), segments in expert order from position 0; row "
                        "L of sorted_token_ids is the segments followed by numel in every "
                        "remaining slot, row L of experts_ids the expert owning each used "
                        "block and -1 in every block after them, num_tokens_post_pad[L] the "
                        "padded total. Rows of adapters that are not processed must be left "
                        "exactly as they were. The order of indices inside one segment is "
                        "free (compared as a sorted set; vLLM fills it with atomics); all else "
                        "is compared exactly. Inputs must be left unchanged.",
            reference=_lora_align_reference,
            make_inputs=_lora_align_inputs,
            cases=LORA_ALIGN_CASES,
            dtypes=_INT,
            flops=lambda p: 2 * p["tokens"] * p["topk"] * p["max_loras"],
            bytes_moved=lambda p, size: 4 * p["max_loras"] * (
                p["tokens"] * p["topk"] + sum(_lora_align_sizes(p)) + 1),
            tags=("moe", "lora", "routing", "out_param"),
            mutated_args=(7, 8, 9),
            compared=_lora_align_compared,
            vllm_callable="vllm._custom_ops.moe_lora_align_block_size",
        ),
        vllm_op(
            "batched_moe_align_block_size",
            signature="kernel(max_tokens_per_batch: int, block_size: int, "
                      "expert_num_tokens: Tensor, sorted_ids: Tensor, expert_ids: Tensor, "
                      "num_tokens_post_pad: Tensor) -> None",
            description="moe_align_block_size for the batched-experts layout, where expert "
                        "b's tokens already sit in rows b * max_tokens_per_batch + i, "
                        "i < expert_num_tokens[b] (int32 [num_batches]). Each batch gets a "
                        "segment of ceil(n_b / block_size) * block_size slots, segments in "
                        "batch order from position 0. Writes sorted_ids (int32, length "
                        "num_batches * max(max_tokens_per_batch, block_size)): the row ids "
                        "b * max_tokens_per_batch + i in ascending order inside each segment, "
                        "the sentinel num_batches * max_tokens_per_batch in every other slot "
                        "(segment padding and the tail); expert_ids (int32, length "
                        "len(sorted_ids) / block_size): the batch owning each block, -1 for "
                        "blocks past the segments; num_tokens_post_pad (int32 [1]): the total "
                        "padded length. Everything is compared exactly.",
            reference=_batched_align_reference,
            make_inputs=_batched_align_inputs,
            cases=BATCHED_ALIGN_CASES,
            dtypes=_INT,
            flops=lambda p: p["batches"],
            bytes_moved=lambda p, size: 4 * 2 * p["batches"] * max(p["max_tokens_per_batch"],
                                                                   p["block_size"]),
            tags=("moe", "routing", "out_param"),
            mutated_args=(3, 4, 5),
            vllm_callable="vllm._custom_ops.batched_moe_align_block_size",
        ),
        vllm_op(
            "moe_sum",
            signature="kernel(input: Tensor, output: Tensor) -> None",
            description="Sum each token's expert outputs: output[t, :] = sum over k of "
                        "input[t, k, :], input [num_tokens, topk, hidden_size], output "
                        "[num_tokens, hidden_size] of the same dtype (float32, float16 or "
                        "bfloat16), written in place; accumulate in float32 and round once. "
                        "input must be left unchanged.",
            reference=_moe_sum_reference,
            make_inputs=_moe_sum_inputs,
            cases=MOE_SUM_CASES,
            flops=lambda p: p["tokens"] * p["topk"] * p["hidden"],
            bytes_moved=lambda p, size: p["tokens"] * p["hidden"] * (p["topk"] + 1) * size,
            reduce_dim=lambda p: p["topk"],
            tags=("moe", "reduction", "out_param"),
            mutated_args=(1,),
            vllm_callable="vllm._custom_ops.moe_sum",
        ),
        vllm_op(
            "shuffle_rows",
            signature="kernel(input_tensor: Tensor, dst2src_map: Tensor) -> Tensor",
            description="Gather rows for an MoE permutation: returns a new tensor of shape "
                        "[len(dst2src_map), hidden] with out[i, :] = "
                        "input_tensor[dst2src_map[i], :]; input_tensor [num_rows, hidden] in "
                        "float32, float16 or bfloat16 (the output's dtype), dst2src_map int32 "
                        "(a source row may be used several times or not at all). Exact copy.",
            reference=_shuffle_reference,
            make_inputs=_shuffle_inputs,
            cases=SHUFFLE_CASES,
            flops=lambda p: 0,
            bytes_moved=lambda p, size: 2 * p["out_rows"] * p["hidden"] * size,
            tags=("moe", "gather"),
            vllm_callable="vllm._custom_ops.shuffle_rows",
        ),
        vllm_op(
            "permute_cols",
            signature="kernel(a: Tensor, perm: Tensor) -> Tensor",
            description="Column permutation (GPTQ act-order): returns a new tensor like a, "
                        "out[:, j] = a[:, perm[j]], a [rows, cols] contiguous float16 or "
                        "bfloat16 with cols a multiple of 8 (vLLM requires both), perm an "
                        "int32 permutation of range(cols). Exact copy.",
            reference=_permute_reference,
            make_inputs=_permute_inputs,
            cases=PERMUTE_CASES,
            dtypes=("float16", "bfloat16"),
            flops=lambda p: 0,
            bytes_moved=lambda p, size: 2 * p["rows"] * p["cols"] * size + 4 * p["cols"],
            tags=("moe", "gather"),
            vllm_callable="vllm._custom_ops.permute_cols",
        ),
        vllm_op(
            "grouped_topk",
            signature="kernel(scores: Tensor, num_expert_group: int, topk_group: int, "
                      "topk: int, renormalize: bool, routed_scaling_factor: float, "
                      "bias: Tensor, scoring_func: int) -> tuple[Tensor, Tensor]",
            description="DeepSeek-V3 grouped top-k routing (noaux_tc). scores [num_tokens, "
                        "num_experts] (float32, float16 or bfloat16), bias "
                        "(e_score_correction_bias) [num_experts] of the same dtype; compute in "
                        "float32. s = sigmoid(scores) if scoring_func == 1 else scores "
                        "(scoring_func 0); b = s + bias. The experts split into "
                        "num_expert_group equal contiguous groups; a group's score is the sum "
                        "of its two largest b; keep the topk_group best groups; among their "
                        "experts choose the topk with the largest b. Weights are the "
                        "unbiased s of the chosen experts, divided by their sum when "
                        "renormalize, then multiplied by routed_scaling_factor. Returns "
                        "(topk_weights float32 [num_tokens, topk], topk_ids int32 "
                        "[num_tokens, topk]) as new tensors; the order of the k entries in a "
                        "row is free (compared after sorting each row by expert id); ids "
                        "exactly, weights at float32 tolerance. Inputs have no near-ties.",
            reference=_grouped_reference,
            make_inputs=_grouped_inputs,
            cases=GROUPED_CASES,
            flops=lambda p: p["tokens"] * p["experts"] * 8,
            bytes_moved=lambda p, size: p["tokens"] * (p["experts"] * size + 8 * p["topk"]),
            tags=("moe", "routing"),
            compared=_grouped_compared,
            vllm_callable="vllm._custom_ops.grouped_topk",
        ),
        vllm_op(
            "fused_moe",
            signature="kernel(hidden_states: Tensor, w1: Tensor, w2: Tensor, "
                      "topk_weights: Tensor, topk_ids: Tensor) -> Tensor",
            description="A SiLU-gated MoE layer (vLLM's fused_experts, unquantised). "
                        "hidden_states [num_tokens, K], w1 [E, 2N, K] (rows 0..N-1 the gate, "
                        "N..2N-1 the up projection), w2 [E, K, N], all one dtype (float32, "
                        "float16, bfloat16); topk_weights float32 and topk_ids int32 "
                        "[num_tokens, topk]. For each token t and slot j with e = "
                        "topk_ids[t, j]: h = w1[e] @ x[t], rounded to the dtype; a = "
                        "silu(h[:N]) * h[N:], rounded; y = topk_weights[t, j] * (w2[e] @ a), "
                        "rounded (products accumulated in float32); returns a new tensor "
                        "[num_tokens, K] of the dtype: the float32 sum over j of the y, "
                        "rounded once. Inputs must be left unchanged.",
            reference=_fused_moe_reference,
            make_inputs=_fused_moe_inputs,
            cases=FUSED_MOE_CASES,
            flops=lambda p: 6 * p["tokens"] * p["topk"] * p["hidden"] * p["inter"],
            bytes_moved=lambda p, size: (3 * p["experts"] * p["hidden"] * p["inter"]
                                         + 2 * p["tokens"] * p["hidden"]) * size,
            reduce_dim=lambda p: max(p["hidden"], p["inter"]) // 16,
            tags=("moe", "gemm"),
            vllm_callable="vllm.model_executor.layers.fused_moe.fused_moe.fused_experts",
        ),
    ]
