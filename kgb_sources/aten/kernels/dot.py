# dot: the 0-d sum of a[i] * b[i] over two 1-D tensors, any strides. Two passes, deterministic:
# each program of the first writes the fp32 partial sum of its chunk of CHUNK elements, and one
# program of the second adds the partials in order and rounds once to the input dtype.
import torch
import triton
import triton.language as tl


@triton.jit
def _dot_partials_kernel(a_ptr, b_ptr, partial_ptr, n, stride_a, stride_b,
                         CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * CHUNK
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for step in range(0, CHUNK, BLOCK):
        offs = start + step + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs * stride_a, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs * stride_b, mask=mask, other=0.0)
        acc += a.to(tl.float32) * b.to(tl.float32)
    tl.store(partial_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def _sum_partials_kernel(partial_ptr, out_ptr, n_partials, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dim() != 1 or b.dim() != 1 or a.shape[0] != b.shape[0]:
        raise ValueError(f"dot needs two 1-D tensors of one length, got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    n = a.shape[0]
    block = 1024
    chunk = 16 * block if a.device.type == "cuda" else block
    n_partials = max(triton.cdiv(n, chunk), 1)
    partials = torch.empty((n_partials,), dtype=torch.float32, device=a.device)
    out = torch.empty((), dtype=a.dtype, device=a.device)
    _dot_partials_kernel[(n_partials,)](a, b, partials, n, a.stride(0), b.stride(0),
                                        CHUNK=chunk, BLOCK=block)
    _sum_partials_kernel[(1,)](partials, out, n_partials, BLOCK=1024)
    return out
