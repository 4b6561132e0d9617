# Reads far outside its input in a Triton kernel, as a kernel with a broken offset does: the
# address faults (SIGSEGV in Triton's interpreter, an illegal address on a GPU) and the runner
# dies; the harness must answer crashed.
import torch
import triton
import triton.language as tl


@triton.jit
def _wild_read(x_ptr, out_ptr):
    far = x_ptr + (1 << 44)
    tl.store(out_ptr, tl.load(far))


def kernel(x):
    out = torch.empty_like(x)
    _wild_read[(1,)](x, out)
    return out
