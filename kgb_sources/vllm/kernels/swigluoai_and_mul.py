# vLLM swigluoai_and_mul(out, input, alpha, limit) (gpt-oss): input [..., 2d] is interleaved,
# gate = input[..., 0::2], up = input[..., 1::2]; g = min(gate, limit), u = clamp(up, -limit,
# limit), out = (u + 1) * g * sigmoid(alpha * g), computed in fp32 and rounded once.
import torch
import triton
import triton.language as tl


@triton.jit
def _swigluoai_kernel(out_ptr, in_ptr, d, alpha, limit, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < d
    gate = tl.load(in_ptr + row * 2 * d + 2 * cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(in_ptr + row * 2 * d + 2 * cols + 1, mask=mask, other=0.0).to(tl.float32)
    g = tl.minimum(gate, limit)
    u = tl.minimum(tl.maximum(up, -limit), limit)
    glu = g * (1.0 / (1.0 + tl.exp(-g * alpha)))
    tl.store(out_ptr + row * d + cols, ((u + 1.0) * glu).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(out: torch.Tensor, input: torch.Tensor, alpha: float, limit: float) -> None:
    d = input.shape[-1] // 2
    rows = input.numel() // max(2 * d, 1)
    if rows == 0 or d == 0:
        return None
    block = min(triton.next_power_of_2(d), 1024)
    _swigluoai_kernel[(rows, triton.cdiv(d, block))](out, input.contiguous(), d, float(alpha),
                                                      float(limit), BLOCK=block)
    return None
