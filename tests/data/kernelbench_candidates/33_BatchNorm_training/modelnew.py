"""BatchNorm1d in training mode over (N, C, L) or (N, C): one program per channel computes the
batch mean and biased variance, writes the normalised output, and updates running_mean and
running_var (momentum 0.1, unbiased variance) in place; program 0 also adds one to
num_batches_tracked, as PyTorch does.
ModelNew: KernelBench's form, whose forward launches the same kernels."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _batch_statistics(x_ptr, c, C, L, total, BLOCK: tl.constexpr):
    """Mean and biased variance of channel c (two passes, for accuracy)."""
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, total, BLOCK):
        e = (start + offs).to(tl.int64)
        mask = e < total
        x = tl.load(x_ptr + (e // L) * C * L + c * L + e % L, mask=mask, other=0.0)
        acc += x.to(tl.float32)
    mean = tl.sum(acc, axis=0) / total

    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, total, BLOCK):
        e = (start + offs).to(tl.int64)
        mask = e < total
        x = tl.load(x_ptr + (e // L) * C * L + c * L + e % L, mask=mask, other=0.0)
        diff = tl.where(mask, x.to(tl.float32) - mean, 0.0)
        acc += diff * diff
    return mean, tl.sum(acc, axis=0) / total


@triton.jit
def _batch_norm_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, var_ptr, count_ptr, out_ptr,
                       N, C, L, eps, momentum, TRAINING: tl.constexpr, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    total = N * L
    offs = tl.arange(0, BLOCK)
    if TRAINING:
        mean, var = _batch_statistics(x_ptr, c, C, L, total, BLOCK)
    else:  # eval mode: the running statistics normalise, and nothing is updated
        mean = tl.load(mean_ptr + c).to(tl.float32)
        var = tl.load(var_ptr + c).to(tl.float32)
    rstd = 1.0 / tl.sqrt(var + eps)

    w = tl.load(w_ptr + c).to(tl.float32)
    b = tl.load(b_ptr + c).to(tl.float32)
    for start in range(0, total, BLOCK):
        e = (start + offs).to(tl.int64)
        mask = e < total
        offsets = (e // L) * C * L + c * L + e % L
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)

    if TRAINING:
        unbiased = var * total / tl.maximum(total - 1, 1)
        old_mean = tl.load(mean_ptr + c).to(tl.float32)
        old_var = tl.load(var_ptr + c).to(tl.float32)
        tl.store(mean_ptr + c, ((1.0 - momentum) * old_mean + momentum * mean)
                 .to(mean_ptr.dtype.element_ty))
        tl.store(var_ptr + c, ((1.0 - momentum) * old_var + momentum * unbiased)
                 .to(var_ptr.dtype.element_ty))
        if c == 0:
            tl.store(count_ptr, tl.load(count_ptr) + 1)


def _launch(x, weight, bias, running_mean, running_var, num_batches_tracked, num_features,
           training=True):
    x = x.contiguous()
    batch = x.shape[0]
    length = x.shape[2] if x.dim() == 3 else 1
    out = torch.empty_like(x)
    BLOCK = 1024
    _batch_norm_kernel[(num_features,)](x, weight, bias, running_mean, running_var,
                                        num_batches_tracked, out,
                                        batch, num_features, length, 1e-5, 0.1,
                                        TRAINING=training, BLOCK=BLOCK)
    return out


class ModelNew(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.num_features = num_features
        # Holds bn.weight, bn.bias and the running buffers; never called.
        self.bn = nn.BatchNorm1d(num_features)

    def forward(self, x):
        bn = self.bn
        return _launch(x, bn.weight, bn.bias, bn.running_mean, bn.running_var,
                       bn.num_batches_tracked, self.num_features, training=self.training)
