# batched_moe_align_block_size: fill sorted_ids with the sentinel and expert_ids with -1,
# then one program per batch computes its segment start (exclusive cumsum of the padded
# counts), writes its row ids and the owner of its blocks; program 0 writes the total.
import torch
import triton
import triton.language as tl


@triton.jit
def _fill_kernel(ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.full([BLOCK], value, tl.int32), mask=offs < n)


@triton.jit
def _batched_kernel(counts_ptr, sorted_ptr, expert_ids_ptr, post_pad_ptr, num_batches,
                    max_tokens, block_size, BLOCK: tl.constexpr, BLOCK_B: tl.constexpr):
    batch = tl.program_id(0)
    bs = tl.arange(0, BLOCK_B)
    counts = tl.load(counts_ptr + bs, mask=bs < num_batches, other=0)
    padded = (counts + block_size - 1) // block_size * block_size
    start = tl.sum(tl.where(bs < batch, padded, 0), axis=0)
    count = tl.sum(tl.where(bs == batch, counts, 0), axis=0)
    mine = tl.sum(tl.where(bs == batch, padded, 0), axis=0)
    if batch == 0:
        tl.store(post_pad_ptr, tl.sum(padded, axis=0))
    offs = tl.arange(0, BLOCK)
    for chunk in range(0, count, BLOCK):
        i = chunk + offs
        tl.store(sorted_ptr + start + i, batch * max_tokens + i, mask=i < count)
    for block in range(start // block_size, (start + mine) // block_size):
        tl.store(expert_ids_ptr + block, batch)


def kernel(max_tokens_per_batch, block_size, expert_num_tokens, sorted_ids, expert_ids,
           num_tokens_post_pad):
    batches = expert_num_tokens.numel()
    fill = 1024
    _fill_kernel[(triton.cdiv(sorted_ids.numel(), fill),)](
        sorted_ids, sorted_ids.numel(), batches * max_tokens_per_batch, BLOCK=fill)
    _fill_kernel[(triton.cdiv(expert_ids.numel(), fill),)](
        expert_ids, expert_ids.numel(), -1, BLOCK=fill)
    _batched_kernel[(batches,)](expert_num_tokens, sorted_ids, expert_ids, num_tokens_post_pad,
                                batches, max_tokens_per_batch, block_size, BLOCK=256,
                                BLOCK_B=triton.next_power_of_2(batches))
    return None
