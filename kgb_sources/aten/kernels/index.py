# index(x, indices) = x[indices[0]] or x[indices[0], indices[1]]: advanced indexing with int64
# index tensors on x's leading dims (broadcast against each other; negative entries count from
# the end), giving a new contiguous tensor of shape broadcast(indices) + x.shape[len(indices):].
# __INCLUDE _strided_copy__
# __INCLUDE _advanced_index__


def kernel(x: torch.Tensor, indices: list[torch.Tensor]) -> torch.Tensor:
    out = torch.empty(indexed_shape(x, indices), dtype=x.dtype, device=x.device)
    advanced_index(x, indices, out, GATHER)
    return out
