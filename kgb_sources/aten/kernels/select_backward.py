# select_backward(grad, input_sizes, dim, index): zeros of input_sizes with grad copied into the
# slice at `index` of dim (negative counts from the end).
# __INCLUDE _strided_copy__


def kernel(grad: torch.Tensor, input_sizes: list[int], dim: int, index: int) -> torch.Tensor:
    out = torch.zeros(list(input_sizes), dtype=grad.dtype, device=grad.device)
    dim = dim % out.dim()
    if index < 0:
        index += out.shape[dim]
    dst_strides = [s for d, s in enumerate(out.stride()) if d != dim]
    copy_strided(grad, out, grad.shape, grad.stride(), dst_strides,
                 dst_offset=index * out.stride(dim))
    return out
