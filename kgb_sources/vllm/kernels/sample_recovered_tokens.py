# sample_recovered_tokens: one program per flat draft position, which finds its request by
# counting the cumsum entries at or below it; a running argmax of
# residual / q over vocab chunks, lowest index on ties; the n-gram residual is the target
# with the draft token's entry read as 0 (target_probs itself is not written).
import torch
import triton
import triton.language as tl


@triton.jit
def _recovered_kernel(out_ptr, cu_ptr, draft_ids_ptr, draft_probs_ptr, target_ptr, q_ptr,
                      vocab, batch, NGRAM: tl.constexpr, BLOCK: tl.constexpr,
                      BLOCK_B: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    bs = tl.arange(0, BLOCK_B)
    ends = tl.load(cu_ptr + bs, mask=bs < batch, other=2 ** 30)
    req = tl.sum((ends <= t).to(tl.int32), axis=0)
    if True:
        draft_id = tl.load(draft_ids_ptr + t)
        offs = tl.arange(0, BLOCK)
        best = -float("inf")
        best_at = 0
        for chunk in range(0, vocab, BLOCK):
            idx = chunk + offs
            mask = idx < vocab
            p = tl.load(target_ptr + t * vocab + idx, mask=mask, other=0.0)
            if NGRAM:
                prob = tl.where(idx == draft_id, 0.0, p)
            else:
                d = tl.load(draft_probs_ptr + t * vocab + idx, mask=mask, other=0.0)
                prob = tl.maximum(p - d, 0.0)
            q = tl.load(q_ptr + req.to(tl.int64) * vocab + idx, mask=mask, other=1.0)
            score = tl.where(mask, prob / q, -float("inf"))
            m = tl.max(score, axis=0)
            at = tl.min(tl.where(score == m, idx, vocab), axis=0)
            better = m > best
            best_at = tl.where(better, at, best_at)
            best = tl.where(better, m, best)
        tl.store(out_ptr + t, best_at.to(tl.int32))


def kernel(output_token_ids, cu_num_draft_tokens, draft_token_ids, draft_probs, target_probs,
           q):
    batch = cu_num_draft_tokens.shape[0]
    vocab = target_probs.shape[-1]
    if output_token_ids.numel() == 0:
        return None
    ngram = draft_probs is None
    _recovered_kernel[(output_token_ids.numel(),)](
        output_token_ids, cu_num_draft_tokens, draft_token_ids,
        target_probs if ngram else draft_probs, target_probs, q, vocab, batch, NGRAM=ngram,
        BLOCK=min(triton.next_power_of_2(vocab), 1024),
        BLOCK_B=triton.next_power_of_2(batch))
    return None
