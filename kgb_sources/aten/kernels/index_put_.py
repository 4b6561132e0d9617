# index_put_(x, indices, values, accumulate): x[indices] = values (accumulate=False; the
# indexed positions are distinct) or x[indices] += values (accumulate=True; positions may
# repeat, so the adds are atomic, into an fp32 buffer for fp16/bf16 that is then rounded and
# copied back). In place: x is written and returned.
# __INCLUDE _strided_copy__
# __INCLUDE _advanced_index__


def kernel(x: torch.Tensor, indices: list[torch.Tensor], values: torch.Tensor,
           accumulate: bool = False) -> torch.Tensor:
    values = values.expand(indexed_shape(x, indices)).contiguous()
    if not accumulate:
        advanced_index(x, indices, values, STORE)
        return x
    if x.dtype in (torch.float16, torch.bfloat16):
        buffer = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        copy_strided(x, buffer, x.shape, x.stride(), buffer.stride())
        advanced_index(buffer, indices, values, ADD)
        copy_strided(buffer, x, x.shape, buffer.stride(), x.stride())
    else:
        advanced_index(x, indices, values, ADD)
    return x
