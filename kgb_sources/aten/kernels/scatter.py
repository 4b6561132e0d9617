# scatter(x, dim, index, src | value), reduce=None: a copy of x with out[.., index[c], ..] =
# src[c] (or the scalar value) for every coordinate c of index. Targets are distinct, so the
# result does not depend on the order of the writes.
# __INCLUDE _strided_copy__
# __INCLUDE _scatter__


def kernel(x: torch.Tensor, dim: int, index: torch.Tensor, src) -> torch.Tensor:
    out = materialise(x, x.shape, x.stride())
    if isinstance(src, torch.Tensor):
        scatter_into(out, dim, index, src=src)
    else:
        scatter_into(out, dim, index, value=src)
    return out
