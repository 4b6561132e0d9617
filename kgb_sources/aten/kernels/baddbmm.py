# baddbmm: beta * self + alpha * (batch1 @ batch2), batch1 (B, M, K), batch2 (B, K, N), self
# broadcastable to (B, M, N) and read through its broadcast strides (0 along broadcast dims).
# As in ATen, beta == 0 means self is not read at all (its NaNs do not propagate). The bmm tile
# loop with an fp32 accumulator; scaling and the addition happen in the fp32 epilogue.
import torch
import triton
import triton.language as tl


@triton.jit
def _baddbmm_kernel(self_ptr, a_ptr, b_ptr, c_ptr, M, N, K, beta, alpha,
                    stride_sb, stride_sm, stride_sn, stride_ab, stride_am, stride_ak,
                    stride_bb, stride_bk, stride_bn, stride_cb, stride_cm, stride_cn,
                    READ_SELF: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Grouped tile order: GROUP_M row-tiles share each column of B while it is in L2.
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)  # batch * stride may pass 2**31 elements
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
    a_ptrs = (a_ptr + batch * stride_ab
              + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = (b_ptr + batch * stride_bb
              + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        # "ieee": torch.baddbmm computes float32 exactly, and TF32 misses its tolerance on a GPU.
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    out = alpha * acc
    if READ_SELF:
        s = tl.load(self_ptr + batch * stride_sb + offs_m[:, None] * stride_sm
                    + offs_n[None, :] * stride_sn, mask=mask, other=0.0)
        out += beta * s.to(tl.float32)
    c_ptrs = (c_ptr + batch * stride_cb
              + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn)
    tl.store(c_ptrs, out.to(c_ptr.dtype.element_ty), mask=mask)


def _tiles(m: int, device_type: str) -> tuple[int, int, int]:
    """Tile sizes: tl.dot needs every dim >= 16; small M wastes less with BLOCK_M=16."""
    block_m = 16 if m <= 16 else 64
    if device_type == "cuda":
        return (block_m, 64, 64) if m <= 16 else (128, 128, 32)
    return block_m, 64, 32


def kernel(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, beta: float = 1.0,
           alpha: float = 1.0) -> torch.Tensor:
    if (batch1.dim() != 3 or batch2.dim() != 3 or batch1.shape[0] != batch2.shape[0]
            or batch1.shape[2] != batch2.shape[1]):
        raise ValueError(f"baddbmm needs (B, M, K) x (B, K, N), got {tuple(batch1.shape)} x "
                         f"{tuple(batch2.shape)}")
    batch, m, k = batch1.shape
    n = batch2.shape[2]
    c = torch.empty((batch, m, n), dtype=batch1.dtype, device=batch1.device)
    if c.numel() == 0:
        return c
    s = self.expand(batch, m, n)  # a view: broadcast dims get stride 0
    block_m, block_n, block_k = _tiles(m, batch1.device.type)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), batch)
    _baddbmm_kernel[grid](
        s, batch1, batch2, c, m, n, k, float(beta), float(alpha),
        s.stride(0), s.stride(1), s.stride(2),
        batch1.stride(0), batch1.stride(1), batch1.stride(2),
        batch2.stride(0), batch2.stride(1), batch2.stride(2),
        c.stride(0), c.stride(1), c.stride(2), READ_SELF=beta != 0,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8,
        num_warps=8 if block_m == 128 else 4)
    return c
