# sort(x, dim, descending): (values, int64 indices) of x sorted along dim; rows of at most 1024.
# __INCLUDE _sort_rows__


def kernel(x: torch.Tensor, dim: int = -1, descending: bool = False):
    return sort_rows(x, dim, x.shape[dim], descending=descending)
