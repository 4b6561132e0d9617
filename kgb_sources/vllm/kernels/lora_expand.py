# lora_expand: one program per (token, output-column block) and slice launch; tokens
# without an adapter (-1) are skipped. The [BLOCK_H, rank] weight tile times the token's
# rank vector, in fp32, plus the existing output when add_inputs, is stored once.
import torch
import triton
import triton.language as tl


@triton.jit
def _expand_kernel(x_ptr, w_ptr, out_ptr, map_ptr, rank, hidden, out_stride, col0,
                   ADD: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_R: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    hs = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    lora = tl.load(map_ptr + token).to(tl.int64)
    if lora >= 0:
        rs = tl.arange(0, BLOCK_R)
        acc = tl.zeros([BLOCK_H], tl.float32)
        for start in range(0, rank, BLOCK_R):
            r = start + rs
            rmask = r < rank
            x = tl.load(x_ptr + token * rank + r, mask=rmask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + (lora * hidden + hs)[:, None] * rank + r[None, :],
                        mask=(hs < hidden)[:, None] & rmask[None, :], other=0.0).to(tl.float32)
            acc += tl.sum(w * x[None, :], axis=1)
        dst = out_ptr + token * out_stride + col0 + hs
        if ADD:
            acc += tl.load(dst, mask=hs < hidden, other=0.0).to(tl.float32)
        tl.store(dst, acc.to(out_ptr.dtype.element_ty), mask=hs < hidden)


def kernel(inputs, lora_b_weights, output_tensor, token_lora_mapping,
           token_indices_sorted_by_lora_ids, num_tokens_per_lora, lora_token_start_loc,
           lora_ids, no_lora_flag_cpu, offset_start=0, add_inputs=False):
    tokens = output_tensor.shape[0]
    if tokens == 0:
        return None
    col = offset_start
    for slot, weights in enumerate(lora_b_weights):
        hidden, rank = weights.shape[-2], weights.shape[-1]
        block_r = min(triton.next_power_of_2(rank), 64)
        block_h = max(16, min(triton.next_power_of_2(hidden), 1024 // block_r))
        _expand_kernel[(tokens, triton.cdiv(hidden, block_h))](
            inputs[slot].contiguous(), weights.contiguous(), output_tensor, token_lora_mapping,
            rank, hidden, output_tensor.stride(0), col, ADD=bool(add_inputs), BLOCK_H=block_h,
            BLOCK_R=block_r)
        col += hidden
    return None
