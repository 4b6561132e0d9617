# index_add(x, dim, index, source, alpha): a copy of x with alpha * source's slice j along dim
# added into x's slice index[j], for every j; index entries may repeat, so the adds are atomic,
# into an fp32 buffer for fp16/bf16 (rounded once at the end). The 1-D index is expanded (a
# stride-0 view) to source's shape and scattered like scatter_add.
# __INCLUDE _strided_copy__
# __INCLUDE _scatter__


def kernel(x: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor,
           alpha: float = 1.0) -> torch.Tensor:
    dim = dim % x.dim()
    shape = [1] * source.dim()
    shape[dim] = index.numel()
    full_index = index.view(shape).expand(source.shape)
    buffer = accumulation_buffer(x)
    scatter_into(buffer, dim, full_index, src=source, accumulate=True, alpha=alpha)
    return rounded(buffer, x.dtype)
