# moe_align_block_size in three launches: (1) fill sorted_token_ids with the sentinel numel
# and expert_ids with 0; (2) one program per expert counts its slots; (3) one program per
# expert finds its segment start from the padded counts (exclusive cumsum), writes the owner
# of its blocks and its flat indices in ascending order (a running in-chunk cumsum), and
# program 0 writes the padded total.
import torch
import triton
import triton.language as tl


@triton.jit
def _fill_kernel(ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.full([BLOCK], value, tl.int32), mask=offs < n)


@triton.jit
def _count_kernel(ids_ptr, counts_ptr, numel, BLOCK: tl.constexpr):
    expert = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    total = 0
    for start in range(0, numel, BLOCK):
        idx = start + offs
        ids = tl.load(ids_ptr + idx, mask=idx < numel, other=-1)
        total += tl.sum((ids == expert).to(tl.int32), axis=0)
    tl.store(counts_ptr + expert, total)


@triton.jit
def _place_kernel(ids_ptr, counts_ptr, sorted_ptr, expert_ids_ptr, post_pad_ptr, numel,
                  num_experts, block_size, BLOCK: tl.constexpr, BLOCK_E: tl.constexpr):
    expert = tl.program_id(0)
    es = tl.arange(0, BLOCK_E)
    counts = tl.load(counts_ptr + es, mask=es < num_experts, other=0)
    padded = (counts + block_size - 1) // block_size * block_size
    start = tl.sum(tl.where(es < expert, padded, 0), axis=0)
    mine = tl.sum(tl.where(es == expert, padded, 0), axis=0)
    if expert == 0:
        tl.store(post_pad_ptr, tl.sum(padded, axis=0))
    for block in range(start // block_size, (start + mine) // block_size):
        tl.store(expert_ids_ptr + block, expert)
    offs = tl.arange(0, BLOCK)
    placed = start
    for chunk in range(0, numel, BLOCK):
        idx = chunk + offs
        ids = tl.load(ids_ptr + idx, mask=idx < numel, other=-1)
        hit = (ids == expert).to(tl.int32)
        rank = tl.cumsum(hit, axis=0) - 1
        tl.store(sorted_ptr + placed + rank, idx.to(tl.int32), mask=hit > 0)
        placed += tl.sum(hit, axis=0)


def kernel(topk_ids, num_experts, block_size, sorted_token_ids, experts_ids,
           num_tokens_post_pad):
    ids = topk_ids.contiguous().view(-1)
    numel = ids.numel()
    fill = 1024
    _fill_kernel[(triton.cdiv(sorted_token_ids.numel(), fill),)](
        sorted_token_ids, sorted_token_ids.numel(), numel, BLOCK=fill)
    _fill_kernel[(triton.cdiv(experts_ids.numel(), fill),)](
        experts_ids, experts_ids.numel(), 0, BLOCK=fill)
    counts = torch.empty(num_experts, dtype=torch.int32, device=ids.device)
    block = 1024
    _count_kernel[(num_experts,)](ids, counts, numel, BLOCK=block)
    _place_kernel[(num_experts,)](ids, counts, sorted_token_ids, experts_ids,
                                  num_tokens_post_pad, numel, num_experts, block_size,
                                  BLOCK=block, BLOCK_E=triton.next_power_of_2(num_experts))
    return None
