# vLLM's merge_attn_states: out = prefix * p / (p + s) + suffix * s / (p + s) with
# p = exp(p_lse - m), s = exp(s_lse - m), m = max(p_lse, s_lse), in fp32; an lse of +-inf is
# taken as -inf, and where both are -inf the output is the prefix and output_lse is -inf.
# lse tensors are [num_heads, num_tokens]. A program takes TT tokens of one head.
import torch
import triton
import triton.language as tl


@triton.jit
def _merge_attn_states_kernel(out_ptr, out_lse_ptr, prefix_ptr, prefix_lse_ptr, suffix_ptr,
                              suffix_lse_ptr, num_tokens, head_size, o_tok, o_head, p_tok,
                              p_head, s_tok, s_head, HAS_LSE: tl.constexpr, TT: tl.constexpr,
                              DP: tl.constexpr):
    t = tl.program_id(0).to(tl.int64) * TT + tl.arange(0, TT)
    head = tl.program_id(1).to(tl.int64)
    t_ok = t < num_tokens
    d = tl.arange(0, DP)
    mask = t_ok[:, None] & (d < head_size)[None, :]
    p_lse = tl.load(prefix_lse_ptr + head * num_tokens + t, mask=t_ok, other=0.0)
    s_lse = tl.load(suffix_lse_ptr + head * num_tokens + t, mask=t_ok, other=0.0)
    p_lse = tl.where(p_lse == float("inf"), float("-inf"), p_lse)
    s_lse = tl.where(s_lse == float("inf"), float("-inf"), s_lse)
    max_lse = tl.maximum(p_lse, s_lse)
    empty = max_lse == float("-inf")
    shift = tl.where(empty, 0.0, max_lse)
    p_se = tl.exp(p_lse - shift)
    s_se = tl.exp(s_lse - shift)
    total = p_se + s_se
    safe_total = tl.where(empty, 1.0, total)
    p_scale = tl.where(empty, 1.0, p_se / safe_total)
    s_scale = tl.where(empty, 0.0, s_se / safe_total)
    prefix = tl.load(prefix_ptr + t[:, None] * p_tok + head * p_head + d[None, :], mask=mask,
                     other=0.0).to(tl.float32)
    suffix = tl.load(suffix_ptr + t[:, None] * s_tok + head * s_head + d[None, :], mask=mask,
                     other=0.0).to(tl.float32)
    merged = prefix * p_scale[:, None] + suffix * s_scale[:, None]
    tl.store(out_ptr + t[:, None] * o_tok + head * o_head + d[None, :],
             merged.to(out_ptr.dtype.element_ty), mask=mask)
    if HAS_LSE:
        out_lse = tl.where(empty, float("-inf"), tl.log(safe_total) + shift)
        tl.store(out_lse_ptr + head * num_tokens + t, out_lse, mask=t_ok)


def kernel(output, prefix_output, prefix_lse, suffix_output, suffix_lse, output_lse=None):
    num_tokens, num_heads, head_size = output.shape
    if num_tokens == 0:
        return None
    assert output.stride(2) == 1 and prefix_output.stride(2) == 1 and suffix_output.stride(2) == 1
    assert prefix_lse.is_contiguous() and suffix_lse.is_contiguous()
    dp = triton.next_power_of_2(head_size)
    tt = max(1, min((4096 if output.is_cuda else 1024) // dp, triton.next_power_of_2(num_tokens)))
    has_lse = output_lse is not None
    grid = (triton.cdiv(num_tokens, tt), num_heads)
    _merge_attn_states_kernel[grid](
        output, output_lse if has_lse else prefix_lse, prefix_output, prefix_lse, suffix_output,
        suffix_lse, num_tokens, head_size, output.stride(0), output.stride(1),
        prefix_output.stride(0), prefix_output.stride(1), suffix_output.stride(0),
        suffix_output.stride(1), HAS_LSE=has_lse, TT=tt, DP=dp)
    return None
