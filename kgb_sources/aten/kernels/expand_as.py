# expand_as(x, other), materialised: x broadcast to other's shape (other's values are not read).
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    sizes = list(other.shape)
    lead = len(sizes) - x.dim()
    strides = [0] * lead + [x.stride(d) if x.shape[d] == sizes[lead + d] else 0
                            for d in range(x.dim())]
    return materialise(x, sizes, strides)
