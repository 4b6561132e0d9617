# scatter_add(x, dim, index, src): a copy of x with src[c] added into out[.., index[c], ..] for
# every coordinate c of index; targets may repeat, so the adds are atomic, into an fp32 buffer
# for fp16/bf16 (rounded once at the end).
# __INCLUDE _strided_copy__
# __INCLUDE _scatter__


def kernel(x: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    buffer = accumulation_buffer(x)
    scatter_into(buffer, dim, index, src=src, accumulate=True)
    return rounded(buffer, x.dtype)
