# vLLM's cp_gather_cache: request b's tokens pos = seq_starts[b] + i go to dst row
# cu_seq_lens[b] + i, read from src_cache[block_table[b, pos // block_size], pos % block_size].
# Programs tile (request, TOK tokens of it) x the entry; tiles past a request's length do
# nothing (the grid is sized by dst's rows, an upper bound on any request's length).
import torch
import triton
import triton.language as tl


@triton.jit
def _cp_gather_cache_kernel(src_ptr, dst_ptr, table_ptr, cu_ptr, starts_ptr, table_stride,
                            cache_block, cache_entry, dst_row, entry, block_size,
                            HAS_STARTS: tl.constexpr, TOK: tl.constexpr, EB: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    seq_start = tl.load(cu_ptr + b).to(tl.int64)
    seq_len = tl.load(cu_ptr + b + 1).to(tl.int64) - seq_start
    i = tl.program_id(1).to(tl.int64) * TOK + tl.arange(0, TOK)
    live = i < seq_len
    pos = i
    if HAS_STARTS:
        pos = pos + tl.load(starts_ptr + b).to(tl.int64)
    block = tl.load(table_ptr + b * table_stride + pos // block_size, mask=live, other=0)
    src_base = block.to(tl.int64) * cache_block + (pos % block_size) * cache_entry
    dst_base = (seq_start + i) * dst_row
    cols = tl.arange(0, EB)
    for start in range(0, entry, EB):
        c = start + cols
        mask = live[:, None] & (c[None, :] < entry)
        values = tl.load(src_ptr + src_base[:, None] + c[None, :], mask=mask)
        tl.store(dst_ptr + dst_base[:, None] + c[None, :], values, mask=mask)


def kernel(src_cache, dst, block_table, cu_seq_lens, batch_size, seq_starts=None):
    if batch_size == 0 or dst.shape[0] == 0:
        return None
    block_size = src_cache.shape[1]
    entry = src_cache[0, 0].numel()
    # Entries are contiguous within a token (the trailing dims), as vLLM's flatten(2, -1) needs.
    assert src_cache[0, 0].is_contiguous() and dst[0].is_contiguous()
    eb = min(triton.next_power_of_2(entry), 1024)
    tok = max(1, min((4096 if dst.is_cuda else 1024) // eb, 64))
    grid = (batch_size, triton.cdiv(dst.shape[0], tok))
    starts = seq_starts if seq_starts is not None else cu_seq_lens
    _cp_gather_cache_kernel[grid](
        src_cache, dst, block_table, cu_seq_lens, starts, block_table.stride(0),
        src_cache.stride(0), src_cache.stride(1), dst.stride(0), entry, block_size,
        HAS_STARTS=seq_starts is not None, TOK=tok, EB=eb)
    return None
