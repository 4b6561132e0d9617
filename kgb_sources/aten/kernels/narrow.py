# narrow(x, dim, start, length), materialised: the slice start:start+length of dim (start may
# be negative, counting from the end) as a new contiguous tensor.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, dim: int, start: int, length: int) -> torch.Tensor:
    dim = dim % x.dim()
    if start < 0:
        start += x.shape[dim]
    offset = start * x.stride(dim)
    sizes = list(x.shape)
    sizes[dim] = length
    return materialise(x, sizes, x.stride(), offset)
