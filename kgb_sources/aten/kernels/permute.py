# permute(x, dims), materialised: out's dim i is x's dim dims[i], as a new contiguous tensor.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, dims: list[int]) -> torch.Tensor:
    dims = [d % x.dim() for d in dims]
    return materialise(x, [x.shape[d] for d in dims], [x.stride(d) for d in dims])
