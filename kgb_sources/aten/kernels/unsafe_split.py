# unsafe_split(x, split_size, dim): x cut along dim into pieces of split_size (the last one
# shorter when split_size does not divide the size), each a new contiguous tensor.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, split_size: int, dim: int = 0) -> list[torch.Tensor]:
    dim = dim % x.dim()
    total = x.shape[dim]
    pieces = []
    for start in range(0, total, split_size):
        sizes = list(x.shape)
        sizes[dim] = min(split_size, total - start)
        pieces.append(materialise(x, sizes, x.stride(), start * x.stride(dim)))
    return pieces
