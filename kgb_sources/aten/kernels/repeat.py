# repeat(x, repeats): x tiled repeats[d] times along each dim (len(repeats) >= x.dim(), extra
# leading repeats add dims). Read as the view (r0, s0, r1, s1, ..) with stride 0 on each repeat
# dim, which in row-major order is exactly the tiled (r0*s0, r1*s1, ..) tensor.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, repeats: list[int]) -> torch.Tensor:
    lead = len(repeats) - x.dim()
    sizes, strides, out_shape = [], [], []
    for d, r in enumerate(repeats):
        own_size = x.shape[d - lead] if d >= lead else 1
        own_stride = x.stride(d - lead) if d >= lead else 0
        sizes += [r, own_size]
        strides += [0, own_stride]
        out_shape.append(r * own_size)
    return materialise(x, sizes, strides).view(out_shape)
