# __NAME__: vLLM's gated activation, out[..., :d] = __FORMULA__ for input [..., 2d] split into
# its first half x and second half y. vLLM computes the activation in fp32, rounds it to the
# storage dtype, and multiplies in that dtype (c10::Half * c10::Half: fp32 product, one
# rounding); the kernel does the same. One program per (row, block of d columns).
import torch
import triton
import triton.language as tl


@triton.jit
def _tanh(v):
    # tl.math.tanh is absent in Triton 3.9's interpreter; tanh(v) = 2 * sigmoid(2v) - 1.
    return 2.0 / (1.0 + tl.exp(-2.0 * v)) - 1.0


@triton.jit
def _activation(a, threshold):
    return __ACT__


@triton.jit
def _gated_kernel(out_ptr, in_ptr, d, threshold, BLOCK: tl.constexpr, ACT_FIRST: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < d
    x = tl.load(in_ptr + row * 2 * d + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(in_ptr + row * 2 * d + d + cols, mask=mask, other=0.0).to(tl.float32)
    if ACT_FIRST:
        activated = _activation(x, threshold)
        other = y
    else:
        activated = _activation(y, threshold)
        other = x
    # vLLM's ACT_FN returns the storage dtype: round before the product.
    activated = activated.to(out_ptr.dtype.element_ty).to(tl.float32)
    tl.store(out_ptr + row * d + cols, (activated * other).to(out_ptr.dtype.element_ty),
             mask=mask)


def kernel(__PARAMS__) -> None:
    d = input.shape[-1] // 2
    rows = input.numel() // max(2 * d, 1)
    if rows == 0 or d == 0:
        return None
    source = input.contiguous()
    target = out if out.is_contiguous() else torch.empty_like(out)
    block = min(triton.next_power_of_2(d), 1024)
    _gated_kernel[(rows, triton.cdiv(d, block))](target, source, d, __THRESHOLD__, BLOCK=block,
                                                  ACT_FIRST=__ACT_FIRST__)
    if target is not out:
        out.copy_(target)
    return None
