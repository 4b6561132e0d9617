# lora_shrink: one program per (token, rank block) and slice launch; a token without an
# adapter (-1) is skipped. The [BLOCK_R, BLOCK_K] weight tile times the input chunk is
# reduced along K in fp32, scaled, and stored into the fp32 output.
import torch
import triton
import triton.language as tl


@triton.jit
def _shrink_kernel(x_ptr, w_ptr, out_ptr, map_ptr, hidden, rank, scaling,
                   BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    rs = tl.program_id(1) * BLOCK_R + tl.arange(0, BLOCK_R)
    lora = tl.load(map_ptr + token).to(tl.int64)
    if lora >= 0:
        ks = tl.arange(0, BLOCK_K)
        acc = tl.zeros([BLOCK_R], tl.float32)
        for start in range(0, hidden, BLOCK_K):
            k = start + ks
            kmask = k < hidden
            x = tl.load(x_ptr + token * hidden + k, mask=kmask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + (lora * rank + rs)[:, None] * hidden + k[None, :],
                        mask=(rs < rank)[:, None] & kmask[None, :], other=0.0).to(tl.float32)
            acc += tl.sum(w * x[None, :], axis=1)
        tl.store(out_ptr + token * rank + rs, acc * scaling, mask=rs < rank)


def kernel(inputs, lora_a_weights, output_tensor, token_lora_mapping,
           token_indices_sorted_by_lora_ids, num_tokens_per_lora, lora_token_start_loc,
           lora_ids, no_lora_flag_cpu, scaling):
    tokens, hidden = inputs.shape
    if tokens == 0:
        return None
    x = inputs.contiguous()
    for slot, weights in enumerate(lora_a_weights):
        rank = weights.shape[-2]
        block_r = min(triton.next_power_of_2(rank), 64)
        block_k = max(16, 1024 // block_r)
        _shrink_kernel[(tokens, triton.cdiv(rank, block_r))](
            x, weights.contiguous(), output_tensor[slot], token_lora_mapping, hidden, rank,
            float(scaling), BLOCK_R=block_r, BLOCK_K=block_k)
    return None
