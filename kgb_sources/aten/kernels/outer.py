# outer: out[i, j] = a[i] * b[j], a (M,), b (N,), any strides; one product per element, done in
# fp32 and rounded once, as torch does. Each program writes one BLOCK_M x BLOCK_N tile.
import torch
import triton
import triton.language as tl


@triton.jit
def _outer_kernel(a_ptr, b_ptr, out_ptr, M, N, stride_a, stride_b, stride_om, stride_on,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    a = tl.load(a_ptr + rows * stride_a, mask=rows < M, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols * stride_b, mask=cols < N, other=0.0).to(tl.float32)
    out = a[:, None] * b[None, :]
    tl.store(out_ptr + rows[:, None].to(tl.int64) * stride_om + cols[None, :] * stride_on,
             out.to(out_ptr.dtype.element_ty), mask=(rows < M)[:, None] & (cols < N)[None, :])


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dim() != 1 or b.dim() != 1:
        raise ValueError(f"outer needs two 1-D tensors, got {tuple(a.shape)} and {tuple(b.shape)}")
    m, n = a.shape[0], b.shape[0]
    out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    if m and n:
        block_m, block_n = (32, 128) if a.device.type == "cuda" else (16, 64)
        grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
        _outer_kernel[grid](a, b, out, m, n, a.stride(0), b.stride(0), out.stride(0),
                            out.stride(1), BLOCK_M=block_m, BLOCK_N=block_n)
    return out
