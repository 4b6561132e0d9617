# linear: F.linear(x, weight, bias) = x @ weight.T + bias, x (..., K), weight (N, K), bias (N,)
# or None. x's leading dims are flattened to M rows (a view when its layout allows). weight is
# read through its transposed strides, never copied; the bias is added in the fp32 epilogue.
import torch
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K,
                   stride_xm, stride_xk, stride_wk, stride_wn, stride_bias, stride_ym, stride_yn,
                   HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Grouped tile order: GROUP_M row-tiles share each column of W.T while it is in L2.
    pid = tl.program_id(0)
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
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :].to(tl.int64) * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(w_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        # "ieee": F.linear computes float32 exactly, and TF32 misses its tolerance on a GPU.
        acc = tl.dot(a, b, acc, input_precision="ieee")
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)
        acc += bias.to(tl.float32)[None, :]
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _tiles(m: int, device_type: str) -> tuple[int, int, int]:
    """Tile sizes: tl.dot needs every dim >= 16; small M (decode) wastes less with BLOCK_M=16."""
    block_m = 16 if m <= 16 else 64
    if device_type == "cuda":
        return (block_m, 64, 64) if m <= 16 else (128, 128, 32)
    return block_m, 64, 32


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    if weight.dim() != 2 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear needs x (..., K) and weight (N, K), got {tuple(x.shape)} and "
                         f"{tuple(weight.shape)}")
    k = x.shape[-1]
    n = weight.shape[0]
    rows = x.reshape(-1, k)
    m = rows.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if m and n:
        block_m, block_n, block_k = _tiles(m, x.device.type)
        grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
        _linear_kernel[grid](
            rows, weight, bias if bias is not None else weight, y, m, n, k,
            rows.stride(0), rows.stride(1), weight.stride(1), weight.stride(0),
            bias.stride(0) if bias is not None else 0, y.stride(0), y.stride(1),
            HAS_BIAS=bias is not None, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
            GROUP_M=8, num_warps=8 if block_m == 128 else 4)
    return y.reshape(*x.shape[:-1], n)
