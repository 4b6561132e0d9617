# Adds atomically far outside its input in a Triton kernel, as a kernel with a broken offset
# does: the address faults (SIGSEGV in Triton's interpreter, an illegal address on a GPU) and
# the runner dies; the harness must answer crashed. (An atomic: a plain load or store that far
# out is stopped first by the CPU backend's bounds check, kgb_backends/interpreter_shims.py,
# as a runtime_error, and the point here is a runner that dies.)
import torch
import triton
import triton.language as tl


@triton.jit
def _wild_read(x_ptr, out_ptr):
    far = x_ptr + (1 << 44)
    tl.store(out_ptr, tl.atomic_add(far, 1.0))


def kernel(x):
    out = torch.empty_like(x)
    _wild_read[(1,)](x, out)
    return out
