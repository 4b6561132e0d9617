# topk_softmax: per token, softmax over the experts in fp32, then k rounds of argmax. Each
# round takes the largest probability, breaking ties towards the lower expert index (as
# vLLM's warp argmax does), and masks the winner out. One program per token row.
import torch
import triton
import triton.language as tl


@triton.jit
def _topk_softmax_kernel(gating_ptr, weights_ptr, ids_ptr, slots_ptr, num_tokens, E, K,
                         RENORMALIZE: tl.constexpr, BLOCK_E: tl.constexpr,
                         BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_E)
    valid = cols < E
    logits = tl.load(gating_ptr + row * E + cols, mask=valid, other=-float("inf"))
    logits = logits.to(tl.float32)
    peak = tl.max(logits, axis=0)
    numer = tl.where(valid, tl.exp(logits - peak), 0.0)
    probs = numer / tl.sum(numer, axis=0)
    probs = tl.where(valid, probs, -1.0)
    ks = tl.arange(0, BLOCK_K)
    chosen_w = tl.zeros([BLOCK_K], tl.float32)
    chosen_i = tl.zeros([BLOCK_K], tl.int32)
    for k in range(0, K):
        best = tl.max(probs, axis=0)
        winner = tl.min(tl.where(probs == best, cols, BLOCK_E), axis=0)
        chosen_w = tl.where(ks == k, best, chosen_w)
        chosen_i = tl.where(ks == k, winner, chosen_i)
        probs = tl.where(cols == winner, -1.0, probs)
    if RENORMALIZE:
        total = tl.sum(tl.where(ks < K, chosen_w, 0.0), axis=0)
        total = tl.where(total > 0, total, 1.0)
        chosen_w = chosen_w / total
    kmask = ks < K
    tl.store(weights_ptr + row * K + ks, chosen_w, mask=kmask)
    tl.store(ids_ptr + row * K + ks, chosen_i.to(ids_ptr.dtype.element_ty), mask=kmask)
    tl.store(slots_ptr + row * K + ks, (ks * num_tokens + row).to(slots_ptr.dtype.element_ty),
             mask=kmask)


def kernel(topk_weights, topk_indices, token_expert_indices, gating_output, renormalize):
    num_tokens, num_experts = gating_output.shape
    k = topk_weights.shape[1]
    if num_tokens == 0:
        return None
    gating = gating_output.contiguous()
    _topk_softmax_kernel[(num_tokens,)](
        gating, topk_weights, topk_indices, token_expert_indices, num_tokens, num_experts, k,
        RENORMALIZE=bool(renormalize), BLOCK_E=triton.next_power_of_2(num_experts),
        BLOCK_K=triton.next_power_of_2(k))
    return None
