# op: aten.relu
# expect: stale_output
# Caches on a function attribute (which no scan of module-level state sees), keyed on
# the input's address: new values written into the same tensor get the old answer.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def _right_relu(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    _relu[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    return out


@triton.jit
def _touch(ptr, n, BLOCK: tl.constexpr):
    # A real launch that does none of the work, so "no Triton launch" cannot be the verdict.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(ptr + offsets, tl.load(ptr + offsets, mask=mask), mask=mask)


def _launch_something(x):
    scratch = torch.empty(64, dtype=torch.float32, device=x.device)
    _touch[(1,)](scratch, 64, BLOCK=64)


def kernel(x):
    _launch_something(x)
    memo = kernel.__wrapped_results
    key = (x.data_ptr(), tuple(x.shape), x.dtype)
    if key not in memo:
        memo[key] = _right_relu(x)
    return memo[key]


kernel.__wrapped_results = {}
