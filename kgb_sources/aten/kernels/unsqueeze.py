# unsqueeze(x, dim), materialised: x with a size-1 dim inserted at dim (dim in
# [-x.dim()-1, x.dim()]), as a new contiguous tensor.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, dim: int) -> torch.Tensor:
    dim = dim % (x.dim() + 1)
    sizes, strides = list(x.shape), list(x.stride())
    sizes.insert(dim, 1)
    strides.insert(dim, 0)
    return materialise(x, sizes, strides)
