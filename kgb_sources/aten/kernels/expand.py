# expand(x, sizes), materialised: size-1 dims (and new leading dims) broadcast to `sizes`, -1
# keeping a dim's size; a broadcast dim is read with stride 0.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, sizes: list[int]) -> torch.Tensor:
    lead = len(sizes) - x.dim()
    out_sizes, strides = [], []
    for d, size in enumerate(sizes):
        if d < lead:
            out_sizes.append(size)
            strides.append(0)
            continue
        own = x.shape[d - lead]
        size = own if size == -1 else size
        out_sizes.append(size)
        strides.append(x.stride(d - lead) if own == size else 0)
    return materialise(x, out_sizes, strides)
