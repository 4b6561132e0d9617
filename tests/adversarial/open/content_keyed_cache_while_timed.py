# op: aten.neg
# issue: 21 (timing tricks: a cache keyed on the inputs' content)
# A Triton kernel folds the input into a checksum, one scalar read back on the host (within the
# host-read budget) keys a table of earlier answers. Timed calls cycle through three input sets
# and get new values before every call, but there are only three value sets, so after three
# calls every answer comes from the table: correct, and sampled outputs match. For a memory-bound
# operator the checksum costs a full read anyway; for a compute-bound one (a GEMM) the timing
# is a forged speedup. It passes today: the values repeat across timed calls.
import torch
import triton
import triton.language as tl


@triton.jit
def _checksum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0).to(tl.float32)
    weights = (offsets % 7 + 1).to(tl.float32)
    tl.atomic_add(out_ptr, tl.sum(x * weights, axis=0))


@triton.jit
def _neg(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, -x, mask=mask)


class _Table:
    answers = {}


def kernel(x):
    x = x.contiguous()
    n = x.numel()
    block = 1024
    total = torch.zeros(1, dtype=torch.float32, device=x.device)
    if n:
        _checksum[(triton.cdiv(n, block),)](x, total, n, BLOCK=block)
    key = (tuple(x.shape), x.dtype, total.item())
    if key in _Table.answers:
        return _Table.answers[key]
    out = torch.empty_like(x)
    if n:
        _neg[(triton.cdiv(n, block),)](x, out, n, BLOCK=block)
    _Table.answers[key] = out
    return out
