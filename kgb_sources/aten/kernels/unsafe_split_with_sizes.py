# unsafe_split_with_sizes(x, split_sizes, dim): x cut along dim into pieces of the given sizes
# (summing to x.size(dim)), each a new contiguous tensor.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, split_sizes: list[int], dim: int = 0) -> list[torch.Tensor]:
    dim = dim % x.dim()
    pieces, start = [], 0
    for length in split_sizes:
        sizes = list(x.shape)
        sizes[dim] = length
        pieces.append(materialise(x, sizes, x.stride(), start * x.stride(dim)))
        start += length
    return pieces
