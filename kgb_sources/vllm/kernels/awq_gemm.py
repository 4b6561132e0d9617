# vLLM awq_gemm(input, qweight, scales, qzeros, split_k_iters): qweight [K, N/8] and qzeros
# [K/G, N/8] pack 8 columns a word in AWQ's order (column 8c + j in nibble
# (0, 4, 1, 5, 2, 6, 3, 7)[j] of word c); w = fp16(q - z) * s rounded to fp16; out = input @ w
# with fp32 accumulation. split_k_iters only partitions vLLM's work; this kernel ignores it.
import torch
import triton
import triton.language as tl


@triton.jit
def _awq_kernel(a_ptr, qw_ptr, qz_ptr, s_ptr, out_ptr, M, N, K, group, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    n_ok = rn < N
    j = rn % 8
    shift = ((j % 2) * 4 + j // 2) * 4  # nibble (0, 4, 1, 5, 2, 6, 3, 7)[j]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        k_ok = kk < K
        both = k_ok[:, None] & n_ok[None, :]
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * K + kk[None, :],
                    mask=(rm[:, None] < M) & k_ok[None, :], other=0.0)
        words = tl.load(qw_ptr + kk[:, None].to(tl.int64) * (N // 8) + (rn // 8)[None, :],
                        mask=both, other=0)
        g = kk // group
        zwords = tl.load(qz_ptr + g[:, None].to(tl.int64) * (N // 8) + (rn // 8)[None, :],
                         mask=both, other=0)
        q = (words >> shift[None, :]) & 0xF
        z = (zwords >> shift[None, :]) & 0xF
        scale = tl.load(s_ptr + g[:, None].to(tl.int64) * N + rn[None, :], mask=both,
                        other=0.0)
        w = ((q - z).to(tl.float32) * scale.to(tl.float32)).to(tl.float16)
        acc += tl.dot(a.to(tl.float16), w, out_dtype=tl.float32)
    tl.store(out_ptr + rm[:, None].to(tl.int64) * N + rn[None, :],
             acc.to(out_ptr.dtype.element_ty), mask=(rm[:, None] < M) & n_ok[None, :])


def kernel(input, qweight, scales, qzeros, split_k_iters):  # noqa: A002, ANN001, ANN201
    m, k = input.shape
    n = qweight.shape[1] * 8
    group = k // qzeros.shape[0]
    out = torch.empty((m, n), dtype=input.dtype, device=input.device)
    block = 64 if input.is_cuda else 32
    block_m = 16 if m <= 16 else block
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block))
    _awq_kernel[grid](input.contiguous(), qweight, qzeros, scales, out, m, n, k, group,
                      BLOCK_M=block_m, BLOCK_N=block, BLOCK_K=block)
    return out
