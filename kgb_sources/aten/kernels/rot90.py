# rot90(x, k, dims): rotation by 90 degrees k times in the plane of dims, from dims[0] towards
# dims[1] (as torch.rot90). As in ATen: k=1 is flip(dims[1]) then transpose, k=2 flips both
# dims, k=3 is flip(dims[0]) then transpose; k is taken mod 4. Read as one strided view.
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, k: int = 1, dims: list[int] = (0, 1)) -> torch.Tensor:
    d0, d1 = (d % x.dim() for d in dims)
    k = k % 4
    sizes, strides, offset = list(x.shape), list(x.stride()), 0
    flips = {1: [d1], 2: [d0, d1], 3: [d0]}.get(k, [])
    for d in flips:
        offset += (sizes[d] - 1) * strides[d]
        strides[d] = -strides[d]
    if k in (1, 3):
        sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
        strides[d0], strides[d1] = strides[d1], strides[d0]
    return materialise(x, sizes, strides, offset)
