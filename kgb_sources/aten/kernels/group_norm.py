# F.group_norm(x, num_groups, weight, bias, eps) for x of shape (N, C, *): the channels of each
# sample are split into num_groups groups of C / num_groups channels; each group is normalized
# by its own mean and biased variance (in fp32), then each channel gets its weight and bias.
# One program per (sample, group): in a contiguous x a group is one run of
# (C / num_groups) * spatial elements, read twice (statistics, then the normalized values).
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _group_norm_kernel(x_ptr, weight_ptr, bias_ptr, out_ptr, group_size, spatial,
                       channels_per_group, num_groups, eps, BLOCK: tl.constexpr):
    program = tl.program_id(0).to(tl.int64)
    base = program * group_size
    group = program % num_groups
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, group_size, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + base + idx, mask=idx < group_size, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / group_size
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, group_size, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        mask = idx < group_size
        v = tl.load(x_ptr + base + idx, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, v - mean, 0.0)
        squares += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / group_size + eps)
    for start in range(0, group_size, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        mask = idx < group_size
        channel = group * channels_per_group + idx // spatial
        v = tl.load(x_ptr + base + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(weight_ptr + channel, mask=mask, other=1.0).to(tl.float32)
        b = tl.load(bias_ptr + channel, mask=mask, other=0.0).to(tl.float32)
        y = (v - mean) * rstd * w + b
        tl.store(out_ptr + base + idx, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, num_groups: int, weight: torch.Tensor, bias: torch.Tensor,
           eps: float = 1e-5) -> torch.Tensor:
    n, channels = x.shape[0], x.shape[1]
    if channels % num_groups:
        raise ValueError(f"{channels} channels do not split into {num_groups} groups")
    x = x.contiguous()
    out = torch.empty_like(x)
    spatial = x[0, 0].numel()
    channels_per_group = channels // num_groups
    group_size = channels_per_group * spatial
    if x.numel():
        _group_norm_kernel[(n * num_groups,)](x, weight, bias, out, group_size, spatial,
                                              channels_per_group, num_groups, float(eps),
                                              BLOCK=BLOCK)
    return out
