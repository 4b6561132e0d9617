# stack(tensors, dim): same-shape members joined along a new dim (dim in [-rank-1, rank]); each
# member is copied with its own strides into out.select(dim, k).
# __INCLUDE _strided_copy__


def kernel(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    first = tensors[0]
    dim = dim % (first.dim() + 1)
    sizes = list(first.shape)
    sizes.insert(dim, len(tensors))
    out = torch.empty(sizes, dtype=first.dtype, device=first.device)
    dst_strides = [s for d, s in enumerate(out.stride()) if d != dim]
    for k, member in enumerate(tensors):
        copy_strided(member, out, member.shape, member.stride(), dst_strides,
                     dst_offset=k * out.stride(dim))
    return out
