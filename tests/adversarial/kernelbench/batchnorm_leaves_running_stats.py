# op: kernelbench.33_BatchNorm_training
# expect: wrong_output
# Normalises with the batch's statistics and returns the right output, but leaves
# running_mean, running_var and num_batches_tracked as they were. In training mode the
# reference updates them in place; kgb compares those buffers after the call like outputs.
import torch
import triton
import triton.language as tl


@triton.jit
def _batch_norm_output_only(x_ptr, w_ptr, b_ptr, out_ptr, N, C, L, eps, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    total = N * L
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, total, BLOCK):
        e = (start + offs).to(tl.int64)
        mask = e < total
        acc += tl.load(x_ptr + (e // L) * C * L + c * L + e % L, mask=mask, other=0.0)
    mean = tl.sum(acc, axis=0) / total
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, total, BLOCK):
        e = (start + offs).to(tl.int64)
        mask = e < total
        x = tl.load(x_ptr + (e // L) * C * L + c * L + e % L, mask=mask, other=0.0)
        diff = tl.where(mask, x - mean, 0.0)
        acc += diff * diff
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / total + eps)
    w = tl.load(w_ptr + c)
    b = tl.load(b_ptr + c)
    for start in range(0, total, BLOCK):
        e = (start + offs).to(tl.int64)
        mask = e < total
        offsets = (e // L) * C * L + c * L + e % L
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(out_ptr + offsets, (x - mean) * rstd * w + b, mask=mask)


def kernel(x, weight, bias, running_mean, running_var, num_batches_tracked, num_features):
    x = x.contiguous()
    length = x.shape[2] if x.dim() == 3 else 1
    out = torch.empty_like(x)
    _batch_norm_output_only[(num_features,)](x, weight, bias, out, x.shape[0], num_features,
                                             length, 1e-5, BLOCK=1024)
    return out
