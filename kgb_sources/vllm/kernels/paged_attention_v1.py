# vLLM's paged_attention_v1: decode attention over the paged KV cache (key_cache
# [num_blocks, kv_heads, head_size/x, block_size, x], value_cache [num_blocks, kv_heads,
# head_size, block_size]) with grouped-query heads: q head h reads kv head h // group.
# One program per (sequence, kv head) takes the group's query heads together and streams the
# context in TOK-token tiles (gathering each token's block from block_tables) with an online
# softmax in fp32; out = sum p v / (sum e + 1e-6), as vLLM normalises.
import torch
import triton
import triton.language as tl


@triton.jit
def _paged_attention_v1_kernel(out_ptr, q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, alibi_ptr,
                               scale, num_kv_heads, group, head_size, block_size,
                               q_seq, q_head, o_seq, o_head, table_stride,
                               kc_block, kc_head, kc_chunk, kc_offset,
                               vc_block, vc_head, vc_dim, vc_offset,
                               X: tl.constexpr, HAS_ALIBI: tl.constexpr, GP: tl.constexpr,
                               DP: tl.constexpr, TOK: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)
    kv_head = tl.program_id(1).to(tl.int64)
    g = tl.arange(0, GP)
    d = tl.arange(0, DP)
    q_head_idx = kv_head * group + g
    g_ok = g < group
    d_ok = d < head_size
    q = tl.load(q_ptr + seq * q_seq + q_head_idx[:, None] * q_head + d[None, :],
                mask=g_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)
    if HAS_ALIBI:
        slope = tl.load(alibi_ptr + q_head_idx, mask=g_ok, other=0.0).to(tl.float32)
    seq_len = tl.load(lens_ptr + seq).to(tl.int64)
    m = tl.full([GP], float("-inf"), tl.float32)
    l = tl.zeros([GP], tl.float32)
    acc = tl.zeros([GP, DP], tl.float32)
    t_local = tl.arange(0, TOK)
    for start in range(0, seq_len, TOK):
        t = start + t_local
        live = t < seq_len
        block = tl.load(table_ptr + seq * table_stride + t // block_size, mask=live,
                        other=0).to(tl.int64)
        offset = t % block_size
        kv_mask = live[:, None] & d_ok[None, :]
        k_addr = (block[:, None] * kc_block + kv_head * kc_head + (d[None, :] // X) * kc_chunk
                  + offset[:, None] * kc_offset + d[None, :] % X)
        k = tl.load(k_ptr + k_addr, mask=kv_mask, other=0.0).to(tl.float32)
        logits = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * scale
        if HAS_ALIBI:
            logits += slope[:, None] * (t - seq_len + 1).to(tl.float32)[None, :]
        logits = tl.where(live[None, :], logits, float("-inf"))
        m_new = tl.maximum(m, tl.max(logits, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(logits - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        v_addr = (block[:, None] * vc_block + kv_head * vc_head + d[None, :] * vc_dim
                  + offset[:, None] * vc_offset)
        v = tl.load(v_ptr + v_addr, mask=kv_mask, other=0.0).to(tl.float32)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
        m = m_new
    result = acc / (l[:, None] + 1e-6)
    tl.store(out_ptr + seq * o_seq + q_head_idx[:, None] * o_head + d[None, :],
             result.to(out_ptr.dtype.element_ty), mask=g_ok[:, None] & d_ok[None, :])


def kernel(out, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens,
           block_size, max_seq_len, alibi_slopes, kv_cache_dtype, k_scale, v_scale, tp_rank=0,
           blocksparse_local_blocks=0, blocksparse_vert_stride=0, blocksparse_block_size=64,
           blocksparse_head_sliding_step=0):
    assert kv_cache_dtype == "auto" and blocksparse_vert_stride <= 1
    num_seqs, num_heads, head_size = query.shape
    x = key_cache.shape[4]
    group = num_heads // num_kv_heads
    assert query.stride(2) == 1 and out.stride(2) == 1 and key_cache.stride(4) == 1
    gp = triton.next_power_of_2(group)
    dp = triton.next_power_of_2(head_size)
    # TOK context tokens a step: the [group, TOK, head] product stays within ~8k (GPU) or ~4k
    # (interpreter) elements.
    limit = 8192 if query.is_cuda else 4096
    tok = max(16, min(64, triton.next_power_of_2(max(1, limit // (gp * dp)))))
    alibi = alibi_slopes if alibi_slopes is not None else seq_lens
    _paged_attention_v1_kernel[(num_seqs, num_kv_heads)](
        out, query, key_cache, value_cache, block_tables, seq_lens, alibi, float(scale),
        num_kv_heads, group, head_size, block_size, query.stride(0), query.stride(1),
        out.stride(0), out.stride(1), block_tables.stride(0),
        key_cache.stride(0), key_cache.stride(1), key_cache.stride(2), key_cache.stride(3),
        value_cache.stride(0), value_cache.stride(1), value_cache.stride(2),
        value_cache.stride(3),
        X=x, HAS_ALIBI=alibi_slopes is not None, GP=gp, DP=dp, TOK=tok)
    return None
