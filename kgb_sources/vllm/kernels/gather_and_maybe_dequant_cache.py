# vLLM's gather_and_maybe_dequant_cache with kv_cache_dtype 'auto': for each dst token
# t < num_tokens, b = token_to_seq[t], pos = t - cu_seq_lens[b] + seq_starts[b], and
# dst[t] = src_cache[block_table[b, pos // block_size], pos % block_size] (576 wide, MLA).
# A token at or past its request's end is left alone, as vLLM's kernel stops there.
import torch
import triton
import triton.language as tl


@triton.jit
def _gather_kernel(src_ptr, dst_ptr, table_ptr, cu_ptr, seq_ptr, starts_ptr, num_tokens,
                   table_stride, cache_block, cache_entry, dst_row, entry, block_size,
                   HAS_STARTS: tl.constexpr, TOK: tl.constexpr, EB: tl.constexpr):
    t = tl.program_id(0).to(tl.int64) * TOK + tl.arange(0, TOK)
    in_range = t < num_tokens
    b = tl.load(seq_ptr + t, mask=in_range, other=0).to(tl.int64)
    start = tl.load(cu_ptr + b, mask=in_range, other=0).to(tl.int64)
    end = tl.load(cu_ptr + b + 1, mask=in_range, other=0).to(tl.int64)
    live = in_range & (t < end)
    pos = t - start
    if HAS_STARTS:
        pos = pos + tl.load(starts_ptr + b, mask=live, other=0).to(tl.int64)
    pos = tl.where(live, pos, 0)
    block = tl.load(table_ptr + b * table_stride + pos // block_size, mask=live, other=0)
    src_base = block.to(tl.int64) * cache_block + (pos % block_size) * cache_entry
    cols = tl.arange(0, EB)
    for c0 in range(0, entry, EB):
        c = c0 + cols
        mask = live[:, None] & (c[None, :] < entry)
        values = tl.load(src_ptr + src_base[:, None] + c[None, :], mask=mask)
        tl.store(dst_ptr + t[:, None] * dst_row + c[None, :], values.to(dst_ptr.dtype.element_ty),
                 mask=mask)


def kernel(src_cache, dst, block_table, cu_seq_lens, token_to_seq, num_tokens, kv_cache_dtype,
           scale, seq_starts=None):
    if num_tokens == 0:
        return None
    assert kv_cache_dtype == "auto"
    block_size = src_cache.shape[1]
    entry = dst.shape[-1]
    assert src_cache.stride(2) == 1 and dst.stride(1) == 1
    eb = min(triton.next_power_of_2(entry), 1024)
    tok = max(1, (4096 if dst.is_cuda else 1024) // eb)
    grid = (triton.cdiv(num_tokens, tok),)
    starts = seq_starts if seq_starts is not None else cu_seq_lens
    _gather_kernel[grid](
        src_cache, dst, block_table, cu_seq_lens, token_to_seq, starts, num_tokens,
        block_table.stride(0), src_cache.stride(0), src_cache.stride(1), dst.stride(0), entry,
        block_size, HAS_STARTS=seq_starts is not None, TOK=tok, EB=eb)
    return None
