# vLLM gptq_gemm(a, b_q_weight, b_gptq_qzeros, b_gptq_scales, b_g_idx, use_exllama=False,
# use_v2_format, bit): weights in GPTQ's layout, packed along K (value of row k in bits
# bit * (k % p) of word k // p, p = 32 / bit), zeros packed along N, group of row k =
# g_idx[k]. w = fp16(q - (z + 1 unless v2)) * scale, rounded to fp16; out = a @ w, fp32
# accumulation. A tiled GEMM that unpacks a [BLOCK_K, BLOCK_N] tile of w per step.
import torch
import triton
import triton.language as tl


@triton.jit
def _gptq_kernel(a_ptr, qw_ptr, qz_ptr, s_ptr, g_ptr, out_ptr, M, N, K, ZERO_OFFSET: tl.constexpr,
                 BITS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    PER_WORD: tl.constexpr = 32 // BITS
    MASK: tl.constexpr = (1 << BITS) - 1
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    n_ok = rn < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        k_ok = kk < K
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * K + kk[None, :],
                    mask=(rm[:, None] < M) & k_ok[None, :], other=0.0)
        words = tl.load(qw_ptr + (kk // PER_WORD)[:, None].to(tl.int64) * N + rn[None, :],
                        mask=k_ok[:, None] & n_ok[None, :], other=0)
        q = (words >> ((kk % PER_WORD) * BITS)[:, None]) & MASK
        g = tl.load(g_ptr + kk, mask=k_ok, other=0)
        zwords = tl.load(qz_ptr + g[:, None].to(tl.int64) * (N // PER_WORD)
                         + (rn // PER_WORD)[None, :], mask=k_ok[:, None] & n_ok[None, :],
                         other=0)
        z = ((zwords >> ((rn % PER_WORD) * BITS)[None, :]) & MASK) + ZERO_OFFSET
        scale = tl.load(s_ptr + g[:, None].to(tl.int64) * N + rn[None, :],
                        mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        w = ((q - z).to(tl.float32) * scale.to(tl.float32)).to(tl.float16)
        acc += tl.dot(a.to(tl.float16), w, out_dtype=tl.float32)
    tl.store(out_ptr + rm[:, None].to(tl.int64) * N + rn[None, :],
             acc.to(out_ptr.dtype.element_ty), mask=(rm[:, None] < M) & n_ok[None, :])


def kernel(a, b_q_weight, b_gptq_qzeros, b_gptq_scales, b_g_idx, use_exllama, use_v2_format,
           bit):  # noqa: ANN001, ANN201
    m, k = a.shape
    n = b_q_weight.shape[1]
    out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    block = 64 if a.is_cuda else 32
    grid = (triton.cdiv(m, 16 if m <= 16 else block), triton.cdiv(n, block))
    _gptq_kernel[grid](a.contiguous(), b_q_weight, b_gptq_qzeros, b_gptq_scales, b_g_idx, out,
                       m, n, k, ZERO_OFFSET=0 if use_v2_format else 1, BITS=int(bit),
                       BLOCK_M=16 if m <= 16 else block, BLOCK_N=block, BLOCK_K=block)
    return out
