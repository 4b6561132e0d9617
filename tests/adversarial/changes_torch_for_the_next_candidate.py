# op: aten.neg
# expect: wrong_output
# screen: rejected
# Changes process-wide torch state the integrity guard does not watch (the default dtype, the
# number of threads, the RNG), which in a reused worker was still set for the next candidate.
# Each runner is a new process; the corpus test checks that the next candidate passes.
import torch
import triton
import triton.language as tl


@triton.jit
def _fill(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.zeros((BLOCK,), dtype=out_ptr.dtype.element_ty), mask=offsets < n)


def _zeros_like(x):
    out = torch.empty_like(x)
    _fill[(triton.cdiv(x.numel(), 1024),)](out, x.numel(), BLOCK=1024)
    return out

torch.set_default_dtype(torch.float16)
torch.set_num_threads(1)
torch.manual_seed(0)


def kernel(x):
    return _zeros_like(x)
