# apply_top_k_top_p without a sort: one program per row finds thresholds by binary search
# over the float32 values' order-preserving integer keys. Top-k: the k-th largest key
# (largest T with count(key >= T) >= k); values below it are masked. Top-p: the largest key
# T whose cumulative probability S(T) = sum of probs of kept tokens with key <= T is
# <= 1 - p; kept tokens with key <= T are masked, the row's maximum never.
import torch
import triton
import triton.language as tl


@triton.jit
def _key(x):
    bits = x.to(tl.int32, bitcast=True)
    return tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits).to(tl.int64)


@triton.jit
def _topkp_one_block_kernel(logits_ptr, k_ptr, p_ptr, out_ptr, vocab, HAS_K: tl.constexpr,
                            HAS_P: tl.constexpr, BLOCK: tl.constexpr):
    # A row that fits one block: sort it, read the k-th largest value and the top-p cut
    # value off the sorted row and its cumulative sums.
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    valid = offs < vocab
    x = tl.load(logits_ptr + row * vocab + offs, mask=valid, other=-float("inf"))
    ordered = tl.sort(x)  # ascending; padding (-inf) first
    pad = BLOCK - vocab
    kth = -float("inf")
    if HAS_K:
        k = tl.load(k_ptr + row)
        kth = tl.max(tl.where(offs == pad + vocab - k, ordered, -float("inf")), axis=0)
    kept_sorted = tl.where(ordered >= kth, ordered, -float("inf"))
    peak = tl.max(ordered, axis=0)
    cut = -float("inf")
    cut_any = False
    if HAS_P:
        e = tl.where(kept_sorted > -float("inf"), tl.exp(kept_sorted - peak), 0.0)
        sums = tl.cumsum(e, axis=0) / tl.sum(e, axis=0)
        limit = 1.0 - tl.load(p_ptr + row)
        below = (sums <= limit) & (kept_sorted > -float("inf"))
        cut = tl.max(tl.where(below, kept_sorted, -float("inf")), axis=0)
        cut_any = tl.sum(below.to(tl.int32), axis=0) > 0
    masked = (x < kth) | (cut_any & (x <= cut) & (x != peak))
    tl.store(out_ptr + row * vocab + offs, tl.where(masked, -float("inf"), x), mask=valid)


@triton.jit
def _topkp_kernel(logits_ptr, k_ptr, p_ptr, out_ptr, vocab, HAS_K: tl.constexpr,
                  HAS_P: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * vocab
    offs = tl.arange(0, BLOCK)
    # Searches run on int64 scalars (row * 0 + c) so that hi - lo cannot overflow.
    zero = row * 0
    lo_key = zero - 2147483648  # below every key
    if HAS_K:
        k = tl.load(k_ptr + row)
        lo = zero - 2147483648
        hi = zero + 2147483647
        # invariant: count(key >= lo) >= k; find the largest such lo
        for _ in range(0, 33):
            if lo < hi:
                mid = lo + (hi - lo + 1) // 2
                count = 0
                for start in range(0, vocab, BLOCK):
                    idx = start + offs
                    x = tl.load(base + idx, mask=idx < vocab, other=-float("inf"))
                    count += tl.sum(((_key(x) >= mid) & (idx < vocab)).to(tl.int32), axis=0)
                if count >= k:
                    lo = mid
                else:
                    hi = mid - 1
        lo_key = lo
    # row max and softmax denominator over the kept tokens
    peak = -float("inf")
    for start in range(0, vocab, BLOCK):
        idx = start + offs
        x = tl.load(base + idx, mask=idx < vocab, other=-float("inf"))
        peak = tl.maximum(peak, tl.max(x, axis=0))
    cut_key = zero - 2147483649  # masks nothing
    if HAS_P:
        total = 0.0
        for start in range(0, vocab, BLOCK):
            idx = start + offs
            x = tl.load(base + idx, mask=idx < vocab, other=-float("inf"))
            kept = (idx < vocab) & (_key(x) >= lo_key)
            total += tl.sum(tl.where(kept, tl.exp(x - peak), 0.0), axis=0)
        limit = (1.0 - tl.load(p_ptr + row)) * total
        lo = zero - 2147483649
        hi = zero + 2147483647
        # largest T with S(T) <= 1 - p (S(lowest) = 0 qualifies)
        for _ in range(0, 34):
            if lo < hi:
                mid = lo + (hi - lo + 1) // 2
                acc = 0.0
                for start in range(0, vocab, BLOCK):
                    idx = start + offs
                    x = tl.load(base + idx, mask=idx < vocab, other=-float("inf"))
                    key = _key(x)
                    kept = (idx < vocab) & (key >= lo_key) & (key <= mid)
                    acc += tl.sum(tl.where(kept, tl.exp(x - peak), 0.0), axis=0)
                if acc <= limit:
                    lo = mid
                else:
                    hi = mid - 1
        cut_key = lo
    peak_key = _key(peak)
    for start in range(0, vocab, BLOCK):
        idx = start + offs
        x = tl.load(base + idx, mask=idx < vocab, other=0.0)
        key = _key(x)
        masked = (key < lo_key) | ((key <= cut_key) & (key != peak_key))
        tl.store(out_ptr + row * vocab + idx, tl.where(masked, -float("inf"), x),
                 mask=idx < vocab)


def kernel(logits, k, p):
    seqs, vocab = logits.shape
    src = logits.contiguous()
    out = torch.empty_like(src)
    if seqs == 0:
        return out
    if vocab <= 1024:
        _topkp_one_block_kernel[(seqs,)](src, k if k is not None else src,
                                         p if p is not None else src, out, vocab,
                                         HAS_K=k is not None, HAS_P=p is not None,
                                         BLOCK=triton.next_power_of_2(vocab))
        return out
    _topkp_kernel[(seqs,)](src, k if k is not None else src, p if p is not None else src,
                           out, vocab, HAS_K=k is not None, HAS_P=p is not None,
                           BLOCK=min(triton.next_power_of_2(vocab), 4096 if src.is_cuda else 1024))
    return out
