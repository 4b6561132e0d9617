# custom_kernel((x, out, alpha)): writes alpha * x into out and returns it, as the reference.
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * alpha, mask=mask)


def custom_kernel(data):
    x, out, alpha = data
    n = x.numel()
    _scale[(triton.cdiv(n, 1024),)](x, out, alpha, n, BLOCK=1024)
    return out
