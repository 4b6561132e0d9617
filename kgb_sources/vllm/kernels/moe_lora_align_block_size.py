# moe_lora_align_block_size: moe_align_block_size per LoRA adapter. Launch slot s serves
# adapter L = lora_ids[s] when L != -1 and adapter_enabled[L] != 0; only the (token, k) slots
# of tokens with token_lora_mapping == L count. Three launches over (slot, expert): (1) for a
# processed adapter, fill its sorted_token_ids row with numel and its experts_ids row with -1;
# (2) count its slots per expert; (3) place them: segment start = exclusive cumsum of the
# padded counts, block owners, flat indices in ascending order, and the padded total.
import torch
import triton
import triton.language as tl


@triton.jit
def _active(lora_ids_ptr, enabled_ptr, slot):
    lora = tl.load(lora_ids_ptr + slot)
    enabled = tl.load(enabled_ptr + tl.maximum(lora, 0))
    return lora, (lora >= 0) & (enabled != 0)


@triton.jit
def _fill_kernel(sorted_ptr, expert_ids_ptr, lora_ids_ptr, enabled_ptr, padded_len,
                 blocks_len, numel, BLOCK: tl.constexpr):
    slot = tl.program_id(0)
    lora, on = _active(lora_ids_ptr, enabled_ptr, slot)
    if on:
        offs = tl.arange(0, BLOCK)
        row = lora.to(tl.int64)
        for start in range(0, padded_len, BLOCK):
            idx = start + offs
            tl.store(sorted_ptr + row * padded_len + idx, tl.full([BLOCK], numel, tl.int32),
                     mask=idx < padded_len)
        for start in range(0, blocks_len, BLOCK):
            idx = start + offs
            tl.store(expert_ids_ptr + row * blocks_len + idx, tl.full([BLOCK], -1, tl.int32),
                     mask=idx < blocks_len)


@triton.jit
def _count_kernel(ids_ptr, mapping_ptr, lora_ids_ptr, enabled_ptr, counts_ptr, numel, topk,
                  num_experts, BLOCK: tl.constexpr):
    slot = tl.program_id(0)
    expert = tl.program_id(1)
    lora, on = _active(lora_ids_ptr, enabled_ptr, slot)
    offs = tl.arange(0, BLOCK)
    total = 0
    if on:
        for start in range(0, numel, BLOCK):
            idx = start + offs
            inside = idx < numel
            ids = tl.load(ids_ptr + idx, mask=inside, other=-1)
            owner = tl.load(mapping_ptr + idx // topk, mask=inside, other=-2)
            total += tl.sum(((ids == expert) & (owner == lora)).to(tl.int32), axis=0)
    tl.store(counts_ptr + slot * num_experts + expert, total)


@triton.jit
def _place_kernel(ids_ptr, mapping_ptr, lora_ids_ptr, enabled_ptr, counts_ptr, sorted_ptr,
                  expert_ids_ptr, post_pad_ptr, numel, topk, num_experts, block_size,
                  padded_len, blocks_len, BLOCK: tl.constexpr, BLOCK_E: tl.constexpr):
    slot = tl.program_id(0)
    expert = tl.program_id(1)
    lora, on = _active(lora_ids_ptr, enabled_ptr, slot)
    if on:
        row = lora.to(tl.int64)
        es = tl.arange(0, BLOCK_E)
        counts = tl.load(counts_ptr + slot * num_experts + es, mask=es < num_experts, other=0)
        padded = (counts + block_size - 1) // block_size * block_size
        start = tl.sum(tl.where(es < expert, padded, 0), axis=0)
        mine = tl.sum(tl.where(es == expert, padded, 0), axis=0)
        if expert == 0:
            tl.store(post_pad_ptr + row, tl.sum(padded, axis=0))
        for block in range(start // block_size, (start + mine) // block_size):
            tl.store(expert_ids_ptr + row * blocks_len + block, expert)
        offs = tl.arange(0, BLOCK)
        placed = start
        for chunk in range(0, numel, BLOCK):
            idx = chunk + offs
            inside = idx < numel
            ids = tl.load(ids_ptr + idx, mask=inside, other=-1)
            owner = tl.load(mapping_ptr + idx // topk, mask=inside, other=-2)
            hit = ((ids == expert) & (owner == lora)).to(tl.int32)
            rank = tl.cumsum(hit, axis=0) - 1
            tl.store(sorted_ptr + row * padded_len + placed + rank, idx.to(tl.int32),
                     mask=hit > 0)
            placed += tl.sum(hit, axis=0)


def kernel(topk_ids, token_lora_mapping, num_experts, block_size, max_loras,
           max_num_tokens_padded, max_num_m_blocks, sorted_token_ids, experts_ids,
           num_tokens_post_pad, adapter_enabled, lora_ids):  # noqa: ANN001, ANN201
    ids = topk_ids.contiguous().view(-1)
    numel, topk = ids.numel(), topk_ids.shape[1]
    slots = lora_ids.numel()
    _fill_kernel[(slots,)](sorted_token_ids, experts_ids, lora_ids, adapter_enabled,
                           max_num_tokens_padded, max_num_m_blocks, numel, BLOCK=1024)
    counts = torch.empty(slots * num_experts, dtype=torch.int32, device=ids.device)
    _count_kernel[(slots, num_experts)](ids, token_lora_mapping, lora_ids, adapter_enabled,
                                        counts, numel, topk, num_experts, BLOCK=1024)
    _place_kernel[(slots, num_experts)](
        ids, token_lora_mapping, lora_ids, adapter_enabled, counts, sorted_token_ids,
        experts_ids, num_tokens_post_pad, numel, topk, num_experts, block_size,
        max_num_tokens_padded, max_num_m_blocks, BLOCK=1024,
        BLOCK_E=triton.next_power_of_2(num_experts))
    return None
