# vLLM rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox), in place on
# query and key (key may be None). cos_sin_cache [max_position, rot_dim] holds cos in its first
# rot_dim/2 columns and sin in the rest. Pair i of a head is (i, i + rot_dim/2) for NeoX and
# (2i, 2i + 1) for GPT-J; x' = x cos - y sin, y' = y cos + x sin, with vLLM's scalar_t
# arithmetic (each product and the sum rounded to the storage dtype). Only the first rot_dim
# entries of each head change. One program per token for query (and one for key), a
# [heads, rot_dim/2] tile at a time.
import torch
import triton
import triton.language as tl


@triton.jit
def _rotary_kernel(pos_ptr, q_ptr, k_ptr, cache_ptr, num_q_heads, num_k_heads, head_size,
                   rot_dim, IS_NEOX: tl.constexpr, HEADS_BLOCK: tl.constexpr,
                   HALF_BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    if tl.program_id(1) == 0:
        base = q_ptr + token * num_q_heads * head_size
        num_heads = num_q_heads
    else:
        base = k_ptr + token * num_k_heads * head_size
        num_heads = num_k_heads
    half = rot_dim // 2
    i = tl.arange(0, HALF_BLOCK)
    pos = tl.load(pos_ptr + token).to(tl.int64)
    cos = tl.load(cache_ptr + pos * rot_dim + i, mask=i < half, other=0.0).to(tl.float32)
    sin = tl.load(cache_ptr + pos * rot_dim + half + i, mask=i < half, other=0.0).to(tl.float32)
    if IS_NEOX:
        x_index = i
        y_index = i + half
    else:
        x_index = 2 * i
        y_index = 2 * i + 1
    dtype = q_ptr.dtype.element_ty
    for head_start in range(0, num_heads, HEADS_BLOCK):
        heads = head_start + tl.arange(0, HEADS_BLOCK)
        mask = (heads[:, None] < num_heads) & (i[None, :] < half)
        rows = base + heads[:, None] * head_size
        x = tl.load(rows + x_index[None, :], mask=mask, other=0.0).to(tl.float32)
        y = tl.load(rows + y_index[None, :], mask=mask, other=0.0).to(tl.float32)
        x_cos = (x * cos[None, :]).to(dtype).to(tl.float32)
        y_sin = (y * sin[None, :]).to(dtype).to(tl.float32)
        y_cos = (y * cos[None, :]).to(dtype).to(tl.float32)
        x_sin = (x * sin[None, :]).to(dtype).to(tl.float32)
        tl.store(rows + x_index[None, :], (x_cos - y_sin).to(dtype), mask=mask)
        tl.store(rows + y_index[None, :], (y_cos + x_sin).to(dtype), mask=mask)


def kernel(positions: torch.Tensor, query: torch.Tensor, key, head_size: int,  # noqa: ANN001
           cos_sin_cache: torch.Tensor, is_neox: bool) -> None:
    num_tokens = positions.numel()
    if num_tokens == 0:
        return None
    num_q_heads = query.numel() // (num_tokens * head_size)
    num_k_heads = key.numel() // (num_tokens * head_size) if key is not None else 0
    rot_dim = cos_sin_cache.shape[-1]
    half_block = max(triton.next_power_of_2(rot_dim // 2), 16)
    heads_block = max(min(triton.next_power_of_2(max(num_q_heads, num_k_heads)),
                          max(1024 // half_block, 1)), 1)
    _rotary_kernel[(num_tokens, 2 if key is not None else 1)](
        positions.contiguous(), query, key if key is not None else query,
        cos_sin_cache.contiguous(), num_q_heads, num_k_heads, head_size, rot_dim,
        IS_NEOX=bool(is_neox), HEADS_BLOCK=heads_block, HALF_BLOCK=half_block)
    return None
