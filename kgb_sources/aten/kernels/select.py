# select(x, dim, index), materialised: x's slice at `index` of dim (negative counts from the
# end), dim removed, as a new contiguous tensor.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, dim: int, index: int) -> torch.Tensor:
    dim = dim % x.dim()
    if index < 0:
        index += x.shape[dim]
    offset = index * x.stride(dim)
    sizes = [s for d, s in enumerate(x.shape) if d != dim]
    strides = [s for d, s in enumerate(x.stride()) if d != dim]
    return materialise(x, sizes, strides, offset)
