# log_sigmoid_backward(grad_output, x, buffer): d/dx log(sigmoid(x)) = sigmoid(-x), written as
# ATen's CPU kernel writes it from buffer = exp(-|x|) (what log_sigmoid_forward leaves there):
# b / (1 + b) for x >= 0, 1 - b / (1 + b) for x < 0, times grad_output.
import torch
import triton
import triton.language as tl


@triton.jit
def _log_sigmoid_backward_kernel(g_ptr, x_ptr, b_ptr, out_ptr, n_elements,
                                 BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    g = tl.load(g_ptr + offsets, mask=mask).to(tl.float32)
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask).to(tl.float32)
    ratio = b / (1.0 + b)
    y = g * tl.where(x < 0, 1.0 - ratio, ratio)
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(grad_output: torch.Tensor, x: torch.Tensor, buffer: torch.Tensor) -> torch.Tensor:
    grad_output = grad_output.contiguous()
    x = x.contiguous()
    buffer = buffer.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements:
        block = 1024
        _log_sigmoid_backward_kernel[(triton.cdiv(n_elements, block),)](
            grad_output, x, buffer, out, n_elements, BLOCK=block)
    return out
