# op: kernelbench.2_Linear
# expect: wrong_output
# screen: rejected
# Ignores the weights kgb hands in: its constructor (run before the recorders start, with the
# module on the meta device) seeds torch, draws its own weight and bias on the host as
# nn.Linear would, and keeps them as plain attributes, outside the state_dict. The forward
# runs an honest Triton linear kernel with those. Were the judge's weights drawn from a seed
# the candidate can guess, with nn.Linear's own initialisation, they would be the same; the
# judge's values must differ from them, so the output is wrong (kgb draws them under
# torch.manual_seed(seed) with seeds 0 and 1 by default: the seed-0 case matches exactly,
# the seed-1 case does not). The static screen refuses torch.manual_seed.
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        x = tl.load(x_ptr + rm[:, None] * K + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w_t = tl.load(w_ptr + rn[None, :] * K + kk[:, None],
                      mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, w_t, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # the names kgb expects, unused
        torch.manual_seed(0)
        weight = torch.empty(out_features, in_features, device="cpu")
        nn.init.kaiming_uniform_(weight, a=math.sqrt(5))
        bound = 1 / math.sqrt(in_features) if in_features > 0 else 0
        bias = torch.empty(out_features, device="cpu")
        nn.init.uniform_(bias, -bound, bound)
        self.own_weight, self.own_bias = weight, bias  # plain attributes: no state_dict entry

    def forward(self, x):
        x = x.contiguous()
        weight = self.own_weight.to(x.device)
        bias = self.own_bias.to(x.device)
        M, K = x.shape
        N = weight.shape[0]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        _linear_kernel[grid](x, weight, bias, y, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
        return y
