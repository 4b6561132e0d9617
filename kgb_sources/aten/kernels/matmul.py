# matmul: torch.matmul(a, b) with its broadcasting rules. 1-D operands become a (1, K) row or a
# (K, 1) column whose added dim is dropped from the result; every dim before the last two is a
# batch dim, broadcast between a and b (size-1 dims get stride 0, so nothing is expanded in
# memory). Up to two batch dims are handled in the kernel (grid axes 1 and 2); one program
# computes one BLOCK_M x BLOCK_N tile of one product, looping over K with an fp32 accumulator.
import torch
import triton
import triton.language as tl


@triton.jit
def _batched_mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                       stride_a0, stride_a1, stride_am, stride_ak,
                       stride_b0, stride_b1, stride_bk, stride_bn,
                       stride_c0, stride_c1, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # Grouped tile order: GROUP_M row-tiles share each column of B while it is in L2.
    pid = tl.program_id(0)
    batch0 = tl.program_id(1).to(tl.int64)  # batch * stride may pass 2**31 elements
    batch1 = tl.program_id(2).to(tl.int64)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_in_group = GROUP_M * tiles_n
    first_m = (pid // tiles_in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_in_group) % group_rows
    pid_n = (pid % tiles_in_group) // group_rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = (a_ptr + batch0 * stride_a0 + batch1 * stride_a1
              + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = (b_ptr + batch0 * stride_b0 + batch1 * stride_b1
              + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        # "ieee": torch.matmul computes float32 exactly, and TF32 misses its tolerance on a GPU.
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = (c_ptr + batch0 * stride_c0 + batch1 * stride_c1
              + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _tiles(m: int, device_type: str) -> tuple[int, int, int]:
    """Tile sizes: tl.dot needs every dim >= 16; small M (decode) wastes less with BLOCK_M=16."""
    block_m = 16 if m <= 16 else 64
    if device_type == "cuda":
        return (block_m, 64, 64) if m <= 16 else (128, 128, 32)
    return block_m, 64, 32


def _batch_strides(t: torch.Tensor, batch: tuple[int, ...]) -> tuple[int, int]:
    """Strides of t's two (padded) batch dims after broadcasting to ``batch``."""
    lead = t.shape[:-2]
    t = t.reshape((1,) * (len(batch) - len(lead)) + tuple(lead) + tuple(t.shape[-2:])) \
        if len(lead) < len(batch) else t
    strides = t.expand(*batch, *t.shape[-2:]).stride()[:-2]
    return tuple((0, 0) + tuple(strides))[-2:]


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dim() == 0 or b.dim() == 0:
        raise ValueError("matmul needs operands of at least one dim")
    squeeze_rows, squeeze_cols = a.dim() == 1, b.dim() == 1
    a2 = a.unsqueeze(0) if squeeze_rows else a
    b2 = b.unsqueeze(-1) if squeeze_cols else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: {tuple(a.shape)} and {tuple(b.shape)} do not chain")
    batch = tuple(torch.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]))
    if len(batch) > 2:  # fold extra leading batch dims: the kernel has two batch axes
        a2 = a2.expand(*batch, *a2.shape[-2:]).reshape(-1, *batch[-1:], *a2.shape[-2:])
        b2 = b2.expand(*batch, *b2.shape[-2:]).reshape(-1, *batch[-1:], *b2.shape[-2:])
        kernel_batch = tuple(a2.shape[:2])
    else:
        kernel_batch = batch
    m, k = a2.shape[-2:]
    n = b2.shape[-1]
    padded = (1,) * (2 - len(kernel_batch)) + tuple(kernel_batch)
    c = torch.empty((*padded, m, n), dtype=a.dtype, device=a.device)
    if c.numel():
        sa = _batch_strides(a2, tuple(kernel_batch)) if kernel_batch else (0, 0)
        sb = _batch_strides(b2, tuple(kernel_batch)) if kernel_batch else (0, 0)
        block_m, block_n, block_k = _tiles(m, a.device.type)
        grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), padded[0], padded[1])
        _batched_mm_kernel[grid](
            a2, b2, c, m, n, k, sa[0], sa[1], a2.stride(-2), a2.stride(-1),
            sb[0], sb[1], b2.stride(-2), b2.stride(-1),
            c.stride(0), c.stride(1), c.stride(2), c.stride(3),
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8,
            num_warps=8 if block_m == 128 else 4)
    out = c.reshape(*batch, m, n)
    if squeeze_rows:
        out = out.squeeze(-2)
    if squeeze_cols:
        out = out.squeeze(-1)
    return out
