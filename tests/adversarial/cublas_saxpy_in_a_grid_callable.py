# op: cublas.cublasSaxpy_v2
# expect: reference_used
# cuBLAS's axpy (y += alpha * x over strided elements) done by torch inside the launch's grid
# callable, which Triton calls inside its launch, where the recorders were suspended; the
# kernel launched with that grid does nothing.
import torch
import triton
import triton.language as tl


@triton.jit
def _nothing(ptr):
    pass


def kernel(n, alpha, x, incx, y, incy):
    def grid(meta):
        if n > 0:
            y[: n * incy: incy].add_(x[: n * incx: incx], alpha=alpha)
        return (1,)

    _nothing[grid](y)
    return None
