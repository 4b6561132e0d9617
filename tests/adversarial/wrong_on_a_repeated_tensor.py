# op: aten.relu
# expect: wrong_output
# Wrong only when called again on the same tensor, with an answer that is not the old one:
# the rewritten-inputs trial catches it, and calls it a wrong output, not a stale one (stale
# means the old values' answer came back).
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0) + shift, mask=mask)


def _right_relu(x, shift=0.0):
    x = x.contiguous()
    out = torch.empty_like(x)
    _relu[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), shift, BLOCK=256)
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
    seen = kernel.__seen_pointers
    key = (x.data_ptr(), tuple(x.shape), x.dtype)
    if key in seen:
        return _right_relu(x, shift=1.0)  # wrong for the new values, and not the old answer
    seen.add(key)
    return _right_relu(x)


kernel.__seen_pointers = set()
