# reflection_pad1d_backward(grad_output, input, padding): the gradient of reflection_pad1d
# (padding = (left, right), each < W) with respect to its input of width W. Forward, output
# position o reads input o - left, reflected at the edges (-k -> k, W-1+k -> W-1-k), so input j
# receives grad_output at j + left, plus left - j when 1 <= j <= left, plus left + 2(W-1) - j
# when W-1-right <= j <= W-2: at most three terms, gathered (no atomics) and added in fp32.
# Leading dims (C or N, C) are padded to two; grad_output is read with its own strides.
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _reflection_pad1d_backward_kernel(go_ptr, out_ptr, n_elements, size1, width, left, right,
                                      go_s0, go_s1, go_s2, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64 offsets: large tensors pass 2**31 elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    j = offsets % width
    rest = offsets // width
    c = rest % size1
    n = rest // size1
    row = go_ptr + n * go_s0 + c * go_s1
    acc = tl.load(row + (j + left) * go_s2, mask=mask, other=0.0).to(tl.float32)
    from_left = mask & (j >= 1) & (j <= left)
    acc += tl.load(row + (left - j) * go_s2, mask=from_left, other=0.0).to(tl.float32)
    from_right = mask & (j >= width - 1 - right) & (j <= width - 2)
    acc += tl.load(row + (left + 2 * (width - 1) - j) * go_s2, mask=from_right,
                   other=0.0).to(tl.float32)
    tl.store(out_ptr + offsets, acc.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(grad_output: torch.Tensor, input: torch.Tensor, padding: list[int]) -> torch.Tensor:
    if input.dim() not in (2, 3):
        raise ValueError(f"reflection_pad1d takes (C, W) or (N, C, W), got {tuple(input.shape)}")
    left, right = padding
    lead = 3 - input.dim()
    sizes = [1] * lead + list(input.shape)
    go_strides = [0] * lead + list(grad_output.stride())
    out = torch.empty(input.shape, dtype=grad_output.dtype, device=grad_output.device)
    n_elements = out.numel()
    if n_elements:
        _reflection_pad1d_backward_kernel[(triton.cdiv(n_elements, BLOCK),)](
            grad_output, out, n_elements, sizes[1], sizes[2], left, right, *go_strides,
            BLOCK=BLOCK)
    return out
