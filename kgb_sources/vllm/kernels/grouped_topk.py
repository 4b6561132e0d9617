# grouped_topk (DeepSeek-V3 noaux_tc): one program per token. Scores in fp32 (sigmoid when
# scoring_func == 1), biased scores b = s + bias; group score = sum of each group's two
# largest b; topk_group rounds of argmax choose the groups; topk rounds of argmax over the
# experts of the chosen groups choose the experts; weights are the unbiased s.
import torch
import triton
import triton.language as tl


@triton.jit
def _grouped_topk_kernel(scores_ptr, bias_ptr, weights_ptr, ids_ptr, E, group_size,
                         num_groups, topk_group, K, scale, SIGMOID: tl.constexpr,
                         RENORMALIZE: tl.constexpr, BLOCK_E: tl.constexpr,
                         BLOCK_G: tl.constexpr, BLOCK_K: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_E)
    valid = cols < E
    s = tl.load(scores_ptr + row * E + cols, mask=valid, other=0.0).to(tl.float32)
    if SIGMOID:
        s = 1.0 / (1.0 + tl.exp(-s))
    b = s + tl.load(bias_ptr + cols, mask=valid, other=0.0).to(tl.float32)
    b = tl.where(valid, b, -float("inf"))
    group_of = cols // group_size
    gs = tl.arange(0, BLOCK_G)
    group_score = tl.full([BLOCK_G], -float("inf"), tl.float32)
    for g in range(0, num_groups):
        in_group = (group_of == g) & valid
        vals = tl.where(in_group, b, -float("inf"))
        first = tl.max(vals, axis=0)
        first_at = tl.min(tl.where(vals == first, cols, BLOCK_E), axis=0)
        second = tl.max(tl.where(cols == first_at, -float("inf"), vals), axis=0)
        group_score = tl.where(gs == g, first + second, group_score)
    keep = tl.zeros([BLOCK_E], tl.int1)
    for _ in range(0, topk_group):
        best = tl.max(group_score, axis=0)
        winner = tl.min(tl.where(group_score == best, gs, BLOCK_G), axis=0)
        keep = keep | (group_of == winner)
        group_score = tl.where(gs == winner, -float("inf"), group_score)
    cand = tl.where(keep & valid, b, -float("inf"))
    ks = tl.arange(0, BLOCK_K)
    chosen_w = tl.zeros([BLOCK_K], tl.float32)
    chosen_i = tl.zeros([BLOCK_K], tl.int32)
    for k in range(0, K):
        best = tl.max(cand, axis=0)
        winner = tl.min(tl.where(cand == best, cols, BLOCK_E), axis=0)
        weight = tl.sum(tl.where(cols == winner, s, 0.0), axis=0)
        chosen_w = tl.where(ks == k, weight, chosen_w)
        chosen_i = tl.where(ks == k, winner, chosen_i)
        cand = tl.where(cols == winner, -float("inf"), cand)
    if RENORMALIZE:
        chosen_w = chosen_w / tl.sum(tl.where(ks < K, chosen_w, 0.0), axis=0)
    chosen_w = chosen_w * scale
    tl.store(weights_ptr + row * K + ks, chosen_w, mask=ks < K)
    tl.store(ids_ptr + row * K + ks, chosen_i, mask=ks < K)


def kernel(scores, num_expert_group, topk_group, topk, renormalize, routed_scaling_factor,
           bias, scoring_func):
    tokens, experts = scores.shape
    weights = torch.empty((tokens, topk), dtype=torch.float32, device=scores.device)
    ids = torch.empty((tokens, topk), dtype=torch.int32, device=scores.device)
    if tokens == 0:
        return weights, ids
    _grouped_topk_kernel[(tokens,)](
        scores.contiguous(), bias.contiguous(), weights, ids, experts,
        experts // num_expert_group, num_expert_group, topk_group, topk,
        float(routed_scaling_factor), SIGMOID=scoring_func == 1,
        RENORMALIZE=bool(renormalize), BLOCK_E=triton.next_power_of_2(experts),
        BLOCK_G=triton.next_power_of_2(num_expert_group),
        BLOCK_K=triton.next_power_of_2(topk))
    return weights, ids
