# vLLM convert_vertical_slash_indexes: one program per (head, batch, row block) replays the
# sequential merge of the head's vertical indexes (ascending key columns) and slash indexes
# (descending diagonal offsets) into KV blocks (block_offset / block_count) and loose columns
# (column_index / column_count), exactly as the CUDA kernel steps through it. Rows with
# start_m >= q_seqlen are left untouched. The CUDA `while (1) ... break` loop becomes a
# `while done == 0` loop, since Triton has no break.
import torch
import triton
import triton.language as tl


@triton.jit
def _save_blocks(offset_row, range_start, range_end, block_n, count, kv_len):
    if range_start < kv_len:
        end = tl.minimum(range_end, kv_len)
        for idx in range(range_start, end, block_n):
            tl.store(offset_row + count, idx)
            count += 1
    return count


@triton.jit
def _vertical_slash_kernel(q_lens_ptr, kv_lens_ptr, vert_ptr, slash_ptr, count_ptr,
                           offset_ptr, col_count_ptr, col_ptr, heads, rows, block_m, block_n,
                           nnz_v, nnz_s, CAUSAL: tl.constexpr):
    head = tl.program_id(0)
    batch = tl.program_id(1)
    row = tl.program_id(2)
    q_len = tl.load(q_lens_ptr + batch)
    kv_len = tl.load(kv_lens_ptr + batch)
    start_m = row * block_m
    if start_m < q_len:
        end_m = start_m + block_m
        bh = (batch * heads + head).to(tl.int64)
        verts = vert_ptr + bh * nnz_v
        slashes = slash_ptr + bh * nnz_s
        row_id = bh * rows + row
        offset_row = offset_ptr + row_id * nnz_s
        col_row = col_ptr + row_id * nnz_v
        if CAUSAL:
            shift = kv_len - q_len
        else:
            shift = kv_len
        zero = q_len * 0
        v = zero + 1
        s = zero + 1
        v_idx = tl.load(verts)
        s_idx = tl.load(slashes)
        while (s_idx >= end_m + shift) & (s < nnz_s):
            s_idx = tl.load(slashes + s)
            s += 1
        no_slash = s_idx > end_m + shift
        s_idx = tl.maximum(shift + end_m - s_idx, block_m)
        range_start = s_idx - block_m
        range_end = s_idx
        if no_slash:
            if CAUSAL:
                range_start = shift + end_m
                range_end = shift + end_m + block_n
            else:
                range_start = kv_len
                range_end = kv_len + block_n
        blocks = zero
        columns = zero
        slash_finished = zero
        done = zero
        while done == 0:
            if v_idx < range_end:
                if v_idx < range_start:
                    tl.store(col_row + columns, v_idx)
                    columns += 1
                if v < nnz_v:
                    v_idx = tl.load(verts + v)
                    v += 1
                else:
                    v_idx = end_m + block_n + shift
            else:
                next_slash = tl.load(slashes + s, mask=s < nnz_s, other=-1)
                if CAUSAL:
                    take = s < nnz_s
                else:
                    take = (s < nnz_s) & (next_slash >= start_m)
                if take:
                    s_idx = tl.maximum(shift + end_m - next_slash, block_m)
                    s += 1
                else:
                    if CAUSAL:
                        finish = (v == nnz_v) | (v_idx > range_start)
                    else:
                        finish = v == nnz_v
                    if finish:
                        if not CAUSAL:
                            if (v == nnz_v) & (v_idx < kv_len):
                                tl.store(col_row + columns, v_idx)
                                columns += 1
                        blocks = _save_blocks(offset_row, range_start, range_end, block_n,
                                              blocks, kv_len)
                        done = zero + 1
                    else:
                        if CAUSAL:
                            range_start = shift + end_m
                            range_end = shift + end_m + block_n
                        else:
                            blocks = _save_blocks(offset_row, range_start, range_end,
                                                  block_n, blocks, kv_len)
                            range_start = kv_len
                            range_end = kv_len + block_n
                        slash_finished = zero + 1
                if (slash_finished == 0) & (done == 0):
                    if s_idx > range_end + block_m:
                        blocks = _save_blocks(offset_row, range_start, range_end, block_n,
                                              blocks, kv_len)
                        range_start = s_idx - block_m
                        range_end = s_idx
                    elif s_idx > range_end:
                        range_end += block_m
        tl.store(count_ptr + row_id, blocks)
        tl.store(col_count_ptr + row_id, columns)


def kernel(block_count, block_offset, column_count, column_index, q_seqlens, kv_seqlens,
           vertical_indexes, slash_indexes, context_size, block_size_M, block_size_N,
           causal):  # noqa: ANN001, ANN201
    batch, heads, nnz_s = slash_indexes.shape
    nnz_v = vertical_indexes.shape[-1]
    rows = triton.cdiv(context_size, block_size_M)
    _vertical_slash_kernel[(heads, batch, rows)](
        q_seqlens, kv_seqlens, vertical_indexes.contiguous(), slash_indexes.contiguous(),
        block_count, block_offset, column_count, column_index, heads, rows, block_size_M,
        block_size_N, nnz_v, nnz_s, CAUSAL=bool(causal))
    return None
