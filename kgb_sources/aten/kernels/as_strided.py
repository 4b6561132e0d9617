# as_strided(x, size, stride, storage_offset), materialised: out[c] = storage of x at
# storage_offset + c . stride (elements may repeat when the strides overlap).
# __INCLUDE _strided_copy__


def kernel(x: torch.Tensor, size: list[int], stride: list[int],
           storage_offset: int = 0) -> torch.Tensor:
    # storage_offset counts from the start of x's storage, data_ptr() from x's own offset.
    return materialise(x, size, stride, storage_offset - x.storage_offset())
