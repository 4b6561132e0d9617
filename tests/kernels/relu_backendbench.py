# BackendBench's shape of a kernel (its generated_kernels/relu/relu_implementation_v1.py): the
# entry point is relu_kernel_impl(*args, **kwargs); tests/test_files_method.py lays it out so.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


def relu_kernel_impl(*args, **kwargs):
    x = args[0] if args else kwargs["input"]
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    _relu[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
