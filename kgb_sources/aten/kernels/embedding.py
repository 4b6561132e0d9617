# embedding: out[..., :] = weight[indices[...], :] for weight (V, D) and int64 indices of any
# shape; out has shape indices.shape + (D,). One program copies BLOCK_D columns of one row, so
# each index is loaded once and the row is read and written in wide contiguous chunks.
import torch
import triton
import triton.language as tl


@triton.jit
def _embedding_kernel(weight_ptr, indices_ptr, out_ptr, D, stride_wv, stride_wd,
                      BLOCK_D: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)  # int64 offsets: token * D may pass 2**31
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D
    row = tl.load(indices_ptr + token)
    value = tl.load(weight_ptr + row * stride_wv + cols * stride_wd, mask=mask)
    tl.store(out_ptr + token * D + cols, value, mask=mask)


def kernel(weight: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    if weight.dim() != 2:
        raise ValueError(f"embedding needs a 2-D weight (V, D), got {tuple(weight.shape)}")
    d = weight.shape[1]
    flat = indices.reshape(-1).contiguous()
    out = torch.empty((*indices.shape, d), dtype=weight.dtype, device=weight.device)
    if flat.numel() and d:
        block_d = min(1024, triton.next_power_of_2(d))
        grid = (flat.numel(), triton.cdiv(d, block_d))
        _embedding_kernel[grid](weight, flat, out, d, weight.stride(0), weight.stride(1),
                                BLOCK_D=block_d)
    return out
