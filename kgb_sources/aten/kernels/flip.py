# flip(x, dims): out[.., i, ..] = x[.., size - 1 - i, ..] along every dim in dims. Read as a
# view with negated strides starting at the last element of each flipped dim.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, dims: list[int]) -> torch.Tensor:
    flipped = {d % x.dim() for d in dims}
    strides, offset = list(x.stride()), 0
    for d in flipped:
        offset += (x.shape[d] - 1) * strides[d]
        strides[d] = -strides[d]
    return materialise(x, x.shape, strides, offset)
