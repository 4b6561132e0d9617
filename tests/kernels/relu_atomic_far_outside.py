# Adds atomically far outside its input in a Triton kernel, as a kernel with a broken offset
# does. On a GPU the address faults (an illegal address) and the runner dies: crashed. On the
# CPU backend the interpreter's atomics are bounds-checked like its loads and stores
# (kgb_backends/interpreter_shims.py): a runtime_error naming this kernel's line, where the
# bare interpreter touched the runner's own memory (SIGSEGV, or a heap silently corrupted).
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
