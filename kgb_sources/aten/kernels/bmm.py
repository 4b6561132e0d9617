# bmm: C[i] = A[i] @ B[i] with A (B, M, K), B (B, K, N), any strides. Grid axis 1 is the batch;
# along axis 0 one program computes one BLOCK_M x BLOCK_N tile of C[i], looping over K in
# BLOCK_K steps with an fp32 accumulator; ragged edges are masked.
import torch
import triton
import triton.language as tl


@triton.jit
def _bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
                stride_cb, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
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
        # "ieee": torch.bmm computes float32 exactly, and TF32 misses its tolerance on a GPU.
        # The setting only concerns fp32 operands; fp16/bf16 dots use tensor cores regardless.
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = (c_ptr + batch * stride_cb
              + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _tiles(m: int, device_type: str) -> tuple[int, int, int]:
    """Tile sizes: tl.dot needs every dim >= 16; small M wastes less with BLOCK_M=16."""
    block_m = 16 if m <= 16 else 64
    if device_type == "cuda":
        return (block_m, 64, 64) if m <= 16 else (128, 128, 32)
    return block_m, 64, 32


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(f"bmm needs (B, M, K) x (B, K, N), got {tuple(a.shape)} x "
                         f"{tuple(b.shape)}")
    batch, m, k = a.shape
    n = b.shape[2]
    c = torch.empty((batch, m, n), dtype=a.dtype, device=a.device)
    if batch == 0 or m == 0 or n == 0:
        return c
    block_m, block_n, block_k = _tiles(m, a.device.type)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), batch)
    _bmm_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), a.stride(2),
                      b.stride(0), b.stride(1), b.stride(2), c.stride(0), c.stride(1),
                      c.stride(2), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                      GROUP_M=8, num_warps=8 if block_m == 128 else 4)
    return c
