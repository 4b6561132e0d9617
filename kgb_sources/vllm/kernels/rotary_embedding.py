# vLLM rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox), in place on
# query and key (key may be None). cos_sin_cache [max_position, rot_dim] holds cos in its first
# rot_dim/2 columns and sin in the rest. Pair i of a head is (i, i + rot_dim/2) for NeoX and
# (2i, 2i + 1) for GPT-J; x' = x cos - y sin, y' = y cos + x sin, with vLLM's scalar_t
# arithmetic (each product and the sum rounded to the storage dtype). Only the first rot_dim
# entries of each head change. One program per (token, head), query heads first.
import torch
import triton
import triton.language as tl


@triton.jit
def _rotary_kernel(pos_ptr, q_ptr, k_ptr, cache_ptr, num_q_heads, num_k_heads, head_size,
                   rot_dim, IS_NEOX: tl.constexpr, HALF_BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1)
    if head < num_q_heads:
        base = q_ptr + (token * num_q_heads + head) * head_size
    else:
        base = k_ptr + (token * num_k_heads + (head - num_q_heads)) * head_size
    half = rot_dim // 2
    i = tl.arange(0, HALF_BLOCK)
    mask = i < half
    pos = tl.load(pos_ptr + token).to(tl.int64)
    cos = tl.load(cache_ptr + pos * rot_dim + i, mask=mask, other=0.0).to(tl.float32)
    sin = tl.load(cache_ptr + pos * rot_dim + half + i, mask=mask, other=0.0).to(tl.float32)
    if IS_NEOX:
        x_index = i
        y_index = i + half
    else:
        x_index = 2 * i
        y_index = 2 * i + 1
    x = tl.load(base + x_index, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(base + y_index, mask=mask, other=0.0).to(tl.float32)
    dtype = q_ptr.dtype.element_ty
    x_cos = (x * cos).to(dtype).to(tl.float32)
    y_sin = (y * sin).to(dtype).to(tl.float32)
    y_cos = (y * cos).to(dtype).to(tl.float32)
    x_sin = (x * sin).to(dtype).to(tl.float32)
    tl.store(base + x_index, (x_cos - y_sin).to(dtype), mask=mask)
    tl.store(base + y_index, (y_cos + x_sin).to(dtype), mask=mask)


def kernel(positions: torch.Tensor, query: torch.Tensor, key, head_size: int,  # noqa: ANN001
           cos_sin_cache: torch.Tensor, is_neox: bool) -> None:
    num_tokens = positions.numel()
    if num_tokens == 0:
        return None
    num_q_heads = query.numel() // (num_tokens * head_size)
    num_k_heads = key.numel() // (num_tokens * head_size) if key is not None else 0
    rot_dim = cos_sin_cache.shape[-1]
    half_block = max(triton.next_power_of_2(rot_dim // 2), 16)
    _rotary_kernel[(num_tokens, num_q_heads + num_k_heads)](
        positions.contiguous(), query, key if key is not None else query,
        cos_sin_cache.contiguous(), num_q_heads, num_k_heads, head_size, rot_dim,
        IS_NEOX=bool(is_neox), HALF_BLOCK=half_block)
    return None
