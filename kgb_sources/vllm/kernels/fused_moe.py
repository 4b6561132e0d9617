# fused_moe: three launches over the (token, slot) rows. (1) gate/up GEMV tile per row:
# h = w1[e] @ x, fp32 accumulation, stored in the activation dtype; (2) down GEMV per row:
# a = silu(gate) * up (rounded to the dtype as vLLM's silu_and_mul output is), y = w2[e] @ a
# times the routing weight, stored in the dtype; (3) per token the fp32 sum over its slots.
import torch
import triton
import triton.language as tl


@triton.jit
def _gate_up_kernel(x_ptr, w1_ptr, ids_ptr, h_ptr, topk, K, N2, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr):
    slot = tl.program_id(0).to(tl.int64)
    ns = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    expert = tl.load(ids_ptr + slot).to(tl.int64)
    token = slot // topk
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, K, BLOCK_K):
        k = start + ks
        kmask = k < K
        x = tl.load(x_ptr + token * K + k, mask=kmask, other=0.0).to(tl.float32)
        w = tl.load(w1_ptr + (expert * N2 + ns)[:, None] * K + k[None, :],
                    mask=(ns < N2)[:, None] & kmask[None, :], other=0.0).to(tl.float32)
        acc += tl.sum(w * x[None, :], axis=1)
    tl.store(h_ptr + slot * N2 + ns, acc.to(h_ptr.dtype.element_ty), mask=ns < N2)


@triton.jit
def _down_kernel(h_ptr, w2_ptr, ids_ptr, weights_ptr, y_ptr, K, N, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    slot = tl.program_id(0).to(tl.int64)
    ms = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    expert = tl.load(ids_ptr + slot).to(tl.int64)
    ns = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M], tl.float32)
    for start in range(0, N, BLOCK_N):
        n = start + ns
        nmask = n < N
        gate = tl.load(h_ptr + slot * 2 * N + n, mask=nmask, other=0.0).to(tl.float32)
        up = tl.load(h_ptr + slot * 2 * N + N + n, mask=nmask, other=0.0).to(tl.float32)
        act = (gate * tl.sigmoid(gate) * up).to(h_ptr.dtype.element_ty).to(tl.float32)
        w = tl.load(w2_ptr + (expert * K + ms)[:, None] * N + n[None, :],
                    mask=(ms < K)[:, None] & nmask[None, :], other=0.0).to(tl.float32)
        acc += tl.sum(w * act[None, :], axis=1)
    acc = acc * tl.load(weights_ptr + slot).to(tl.float32)
    tl.store(y_ptr + slot * K + ms, acc.to(y_ptr.dtype.element_ty), mask=ms < K)


@triton.jit
def _sum_kernel(y_ptr, out_ptr, topk, K, BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < K
    acc = tl.zeros([BLOCK], tl.float32)
    for j in range(0, topk):
        acc += tl.load(y_ptr + (token * topk + j) * K + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + token * K + cols, acc.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(hidden_states, w1, w2, topk_weights, topk_ids):
    m, k = hidden_states.shape
    topk = topk_ids.shape[1]
    n = w2.shape[2]
    out = torch.empty((m, k), dtype=hidden_states.dtype, device=hidden_states.device)
    if m == 0:
        return out
    slots = m * topk
    x = hidden_states.contiguous()
    ids = topk_ids.contiguous()
    h = torch.empty((slots, 2 * n), dtype=x.dtype, device=x.device)
    y = torch.empty((slots, k), dtype=x.dtype, device=x.device)
    # The interpreter pays per program and per op: few wide programs there, 64x64 tiles on a GPU.
    block_n = 64 if x.is_cuda else min(triton.next_power_of_2(2 * n), 128)
    block_k = 64 if x.is_cuda else max(8, 1024 // block_n)
    _gate_up_kernel[(slots, triton.cdiv(2 * n, block_n))](x, w1.contiguous(), ids, h, topk, k,
                                                         2 * n, BLOCK_N=block_n,
                                                         BLOCK_K=block_k)
    block_m = 64 if x.is_cuda else min(triton.next_power_of_2(k), 128)
    block_nn = 64 if x.is_cuda else max(8, 1024 // block_m)
    _down_kernel[(slots, triton.cdiv(k, block_m))](h, w2.contiguous(), ids,
                                                   topk_weights.contiguous(), y, k, n,
                                                   BLOCK_M=block_m, BLOCK_N=block_nn)
    block = min(triton.next_power_of_2(k), 1024)
    _sum_kernel[(m, triton.cdiv(k, block))](y, out, topk, k, BLOCK=block)
    return out
