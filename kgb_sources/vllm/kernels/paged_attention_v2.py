# vLLM's paged_attention_v2: paged decode attention split over 512-token partitions of each
# sequence (vLLM's PARTITION_SIZE). Pass 1, one program per (sequence, kv head, partition),
# writes the partition's max logit and exp sum per q head (exp_sums, max_logits) and its
# normalised partial output (tmp_out), streaming TOK-token tiles with an online softmax in
# fp32; q head h reads kv head h // group. Pass 2, one program per (sequence, kv head),
# rescales the partials by exp(max_p - max) and combines them, dividing by the global exp sum
# + 1e-6 as vLLM does.
import torch
import triton
import triton.language as tl

PARTITION_SIZE = 512


@triton.jit
def _partition_kernel(exp_sums_ptr, max_logits_ptr, tmp_out_ptr, q_ptr, k_ptr, v_ptr,
                      table_ptr, lens_ptr, alibi_ptr, scale, group, head_size, block_size,
                      max_parts, q_seq, q_head, table_stride,
                      kc_block, kc_head, kc_chunk, kc_offset,
                      vc_block, vc_head, vc_dim, vc_offset,
                      X: tl.constexpr, HAS_ALIBI: tl.constexpr, GP: tl.constexpr,
                      DP: tl.constexpr, TOK: tl.constexpr, PARTITION: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)
    kv_head = tl.program_id(1).to(tl.int64)
    part = tl.program_id(2).to(tl.int64)
    seq_len = tl.load(lens_ptr + seq).to(tl.int64)
    first = part * PARTITION
    if first < seq_len:
        last = tl.minimum(first + PARTITION, seq_len)
        g = tl.arange(0, GP)
        d = tl.arange(0, DP)
        q_head_idx = kv_head * group + g
        g_ok = g < group
        d_ok = d < head_size
        q = tl.load(q_ptr + seq * q_seq + q_head_idx[:, None] * q_head + d[None, :],
                    mask=g_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)
        if HAS_ALIBI:
            slope = tl.load(alibi_ptr + q_head_idx, mask=g_ok, other=0.0).to(tl.float32)
        m = tl.full([GP], float("-inf"), tl.float32)
        l = tl.zeros([GP], tl.float32)
        acc = tl.zeros([GP, DP], tl.float32)
        t_local = tl.arange(0, TOK)
        for start in range(first, last, TOK):
            t = start + t_local
            live = t < last
            block = tl.load(table_ptr + seq * table_stride + t // block_size, mask=live,
                            other=0).to(tl.int64)
            offset = t % block_size
            kv_mask = live[:, None] & d_ok[None, :]
            k_addr = (block[:, None] * kc_block + kv_head * kc_head
                      + (d[None, :] // X) * kc_chunk + offset[:, None] * kc_offset
                      + d[None, :] % X)
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
        stat = (seq * (group * tl.num_programs(1)) + q_head_idx) * max_parts + part
        tl.store(max_logits_ptr + stat, m, mask=g_ok)
        tl.store(exp_sums_ptr + stat, l, mask=g_ok)
        partial = acc / (l[:, None] + 1e-6)
        tl.store(tmp_out_ptr + stat[:, None] * head_size + d[None, :],
                 partial.to(tmp_out_ptr.dtype.element_ty), mask=g_ok[:, None] & d_ok[None, :])


@triton.jit
def _reduce_kernel(out_ptr, exp_sums_ptr, max_logits_ptr, tmp_out_ptr, lens_ptr, group,
                   head_size, max_parts, o_seq, o_head, GP: tl.constexpr, PP: tl.constexpr,
                   DP: tl.constexpr, PARTITION: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)
    kv_head = tl.program_id(1).to(tl.int64)
    seq_len = tl.load(lens_ptr + seq).to(tl.int64)
    parts = (seq_len + PARTITION - 1) // PARTITION
    g = tl.arange(0, GP)
    pidx = tl.arange(0, PP)
    d = tl.arange(0, DP)
    head = kv_head * group + g
    ok = (g < group)[:, None] & (pidx < parts)[None, :]
    row = (seq * (group * tl.num_programs(1)) + head[:, None]) * max_parts + pidx[None, :]
    maxima = tl.load(max_logits_ptr + row, mask=ok, other=float("-inf"))
    sums = tl.load(exp_sums_ptr + row, mask=ok, other=0.0)
    # Padded heads (g >= group) have no partitions: keep their max finite (no -inf - -inf).
    global_max = tl.where(g < group, tl.max(maxima, axis=1), 0.0)
    weights = tl.where(ok, sums * tl.exp(maxima - global_max[:, None]), 0.0)
    inv_total = 1.0 / (tl.sum(weights, axis=1) + 1e-6)
    d_ok = (d < head_size)[None, None, :]
    partial = tl.load(tmp_out_ptr + row[:, :, None] * head_size + d[None, None, :],
                      mask=ok[:, :, None] & d_ok, other=0.0).to(tl.float32)
    scaled = weights * inv_total[:, None]
    result = tl.sum(partial * scaled[:, :, None], axis=1)
    tl.store(out_ptr + seq * o_seq + head[:, None] * o_head + d[None, :],
             result.to(out_ptr.dtype.element_ty),
             mask=(g < group)[:, None] & (d < head_size)[None, :])


def kernel(out, exp_sum, max_logits, tmp_out, query, key_cache, value_cache, num_kv_heads,
           scale, block_tables, seq_lens, block_size, max_seq_len, alibi_slopes,
           kv_cache_dtype, k_scale, v_scale, tp_rank=0, blocksparse_local_blocks=0,
           blocksparse_vert_stride=0, blocksparse_block_size=64,
           blocksparse_head_sliding_step=0):
    assert kv_cache_dtype == "auto" and blocksparse_vert_stride <= 1
    num_seqs, num_heads, head_size = query.shape
    x = key_cache.shape[4]
    group = num_heads // num_kv_heads
    max_parts = exp_sum.shape[2]
    assert query.stride(2) == 1 and out.stride(2) == 1 and key_cache.stride(4) == 1
    assert exp_sum.is_contiguous() and max_logits.is_contiguous() and tmp_out.is_contiguous()
    gp = triton.next_power_of_2(group)
    dp = triton.next_power_of_2(head_size)
    limit = 8192 if query.is_cuda else 4096
    tok = max(16, min(64, triton.next_power_of_2(max(1, limit // (gp * dp)))))
    alibi = alibi_slopes if alibi_slopes is not None else seq_lens
    _partition_kernel[(num_seqs, num_kv_heads, max_parts)](
        exp_sum, max_logits, tmp_out, query, key_cache, value_cache, block_tables, seq_lens,
        alibi, float(scale), group, head_size, block_size, max_parts, query.stride(0),
        query.stride(1), block_tables.stride(0),
        key_cache.stride(0), key_cache.stride(1), key_cache.stride(2), key_cache.stride(3),
        value_cache.stride(0), value_cache.stride(1), value_cache.stride(2),
        value_cache.stride(3),
        X=x, HAS_ALIBI=alibi_slopes is not None, GP=gp, DP=dp, TOK=tok,
        PARTITION=PARTITION_SIZE)
    _reduce_kernel[(num_seqs, num_kv_heads)](
        out, exp_sum, max_logits, tmp_out, seq_lens, group, head_size, max_parts,
        out.stride(0), out.stride(1), GP=gp, PP=triton.next_power_of_2(max_parts), DP=dp,
        PARTITION=PARTITION_SIZE)
    return None
