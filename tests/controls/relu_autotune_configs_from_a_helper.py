# op: aten.relu
# In the style of Triton's matmul tutorial (03-matrix-multiplication.py): the autotuner's
# configs come from a module-level helper, ``@triton.autotune(configs=get_autotune_config(),
# key=[...])``. A decorator's arguments are host code, not the kernel's body: the screen once
# read them as the body's globals and refused this. One config only: the CPU interpreter
# cannot benchmark several (its autotuner finds no active driver).
import torch
import triton
import triton.language as tl


def get_autotune_config():
    return [triton.Config({"BLOCK": 128})]  # one: the CPU interpreter cannot benchmark several


@triton.autotune(configs=get_autotune_config(), key=["n"])
@triton.jit
def _relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(x > 0, x, 0.0), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    _relu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out
