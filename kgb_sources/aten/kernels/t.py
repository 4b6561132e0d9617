# t(x) for a 2-D x, materialised: out[j, i] = x[i, j], a new contiguous tensor (ATen returns a
# view; the copy is what a kernel can be checked and timed on).
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor) -> torch.Tensor:
    if x.dim() != 2:
        raise ValueError(f"this kernel transposes 2-D tensors, got {tuple(x.shape)}")
    return materialise(x, x.shape[::-1], x.stride()[::-1])
