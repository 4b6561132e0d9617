# reshape(x, shape), materialised: x's elements in row-major (logical) order, whatever its
# strides, copied into a new contiguous tensor that is then viewed as `shape` (-1 inferred).
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, shape: list[int]) -> torch.Tensor:
    return materialise(x, x.shape, x.stride()).view(shape)
