# rejection_sample: one program per request. The program first fills its output row with
# the placeholder -1, then walks its draft positions: greedy requests compare the draft
# token with the target argmax (computed over vocab chunks, lowest index on ties), random
# requests accept when q > 0 and p / q >= u; the first rejection emits its replacement and
# stops; with no rejection the bonus token follows the last draft.
import torch
import triton
import triton.language as tl


@triton.jit
def _argmax_row(row_ptr, vocab, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    best = -float("inf")
    best_at = 0
    for start in range(0, vocab, BLOCK):
        idx = start + offs
        vals = tl.load(row_ptr + idx, mask=idx < vocab, other=-float("inf"))
        m = tl.max(vals, axis=0)
        at = tl.min(tl.where(vals == m, idx, vocab), axis=0)
        better = m > best
        best_at = tl.where(better, at, best_at)
        best = tl.where(better, m, best)
    return best_at


@triton.jit
def _rejection_kernel(out_ptr, cu_ptr, draft_ids_ptr, draft_probs_ptr, target_ptr,
                      bonus_ptr, recovered_ptr, uniform_ptr, greedy_ptr, max_spec_len, vocab,
                      NGRAM: tl.constexpr, BLOCK: tl.constexpr, BLOCK_OUT: tl.constexpr):
    req = tl.program_id(0)
    cols = tl.arange(0, BLOCK_OUT)
    row_out = out_ptr + req * (max_spec_len + 1)
    tl.store(row_out + cols, tl.full([BLOCK_OUT], -1, tl.int32), mask=cols < max_spec_len + 1)
    tl.debug_barrier()
    start = 0
    if req > 0:
        start = tl.load(cu_ptr + req - 1)
    end = tl.load(cu_ptr + req)
    greedy = tl.load(greedy_ptr + req) != 0
    rejected = False
    for pos in range(0, end - start):
        if not rejected:
            t = (start + pos).to(tl.int64)
            draft_id = tl.load(draft_ids_ptr + t)
            if greedy:
                token = _argmax_row(target_ptr + t * vocab, vocab, BLOCK)
                rejected = token != draft_id
            else:
                if NGRAM:
                    q = 1.0
                else:
                    q = tl.load(draft_probs_ptr + t * vocab + draft_id)
                p = tl.load(target_ptr + t * vocab + draft_id)
                u = tl.load(uniform_ptr + t)
                accept = (q > 0) & (p / q >= u)
                token = tl.where(accept, draft_id, tl.load(recovered_ptr + t))
                rejected = not accept
            tl.store(row_out + pos, token.to(tl.int32))
    if not rejected:
        tl.store(row_out + end - start, tl.load(bonus_ptr + req))


def kernel(output_token_ids, cu_num_draft_tokens, draft_token_ids, draft_probs, target_probs,
           bonus_token_ids, recovered_token_ids, uniform_probs, is_greedy, max_spec_len):
    batch = output_token_ids.shape[0]
    vocab = target_probs.shape[-1]
    if batch == 0:
        return None
    ngram = draft_probs is None
    greedy = is_greedy.contiguous().view(torch.uint8)
    _rejection_kernel[(batch,)](
        output_token_ids, cu_num_draft_tokens, draft_token_ids,
        target_probs if ngram else draft_probs, target_probs, bonus_token_ids,
        recovered_token_ids, uniform_probs, greedy, max_spec_len, vocab, NGRAM=ngram,
        BLOCK=min(triton.next_power_of_2(vocab), 1024),
        BLOCK_OUT=triton.next_power_of_2(max_spec_len + 1))
    return None
