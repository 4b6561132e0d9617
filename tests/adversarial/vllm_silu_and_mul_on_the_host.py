# op: vllm.silu_and_mul
# expect: host_read
# vLLM's out-parameter op, computed on the host: the input read with tolist(), silu(x) * y in
# Python's math, the values written back into out with one copy; a Triton launch for show.
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(ptr):
    tl.store(ptr, 0.0)


def kernel(out, input):
    scratch = torch.empty(1, dtype=torch.float32, device=input.device)
    _touch[(1,)](scratch)
    d = input.shape[-1] // 2
    rows = input.reshape(-1, 2 * d).tolist()
    values = [[x / (1.0 + math.exp(-x)) * y for x, y in zip(row[:d], row[d:])] for row in rows]
    out.copy_(torch.tensor(values, dtype=out.dtype, device=out.device).reshape(out.shape))
