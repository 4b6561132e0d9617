# F.__NAME__(x, target, reduction, ignore_index[, label_smoothing]) for x of shape (N, C) and
# class indices target (N,). One program per row computes, in fp32, the row's loss: with
# LOGITS (cross_entropy) an online log-sum-exp over blocks of classes gives -log softmax at the
# target, mixed with the mean over all classes by label_smoothing; without (nll_loss) x holds
# log-probabilities and the loss is -x[target]. Rows whose target is ignore_index get 0 and do
# not count. Stage 2 (mean/sum) adds the row losses in a fixed order and, for "mean", divides
# by the number of counted rows.
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _row_loss_kernel(x_ptr, target_ptr, loss_ptr, counted_ptr, n_classes, stride_row,
                     stride_col, ignore_index, smoothing,
                     LOGITS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    target = tl.load(target_ptr + row)
    counted = target != ignore_index
    safe_target = tl.where(counted, target, 0)
    picked = tl.load(x_ptr + row * stride_row + safe_target * stride_col).to(tl.float32)
    if LOGITS:
        running_max = tl.full([BLOCK], float("-inf"), tl.float32)
        running_sum = tl.zeros([BLOCK], tl.float32)
        total = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_classes, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_classes
            v = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask,
                        other=float("-inf")).to(tl.float32)
            new_max = tl.maximum(running_max, v)
            safe_max = tl.where(new_max == float("-inf"), 0.0, new_max)
            running_sum = running_sum * tl.exp(running_max - safe_max) + tl.exp(v - safe_max)
            running_max = new_max
            total += tl.where(mask, v, 0.0)
        row_max = tl.max(running_max, axis=0)
        lse = row_max + tl.log(tl.sum(running_sum * tl.exp(running_max - row_max), axis=0))
        nll = lse - picked
        smooth = lse - tl.sum(total, axis=0) / n_classes
        loss = (1.0 - smoothing) * nll + smoothing * smooth
    else:
        loss = -picked
    tl.store(loss_ptr + row, tl.where(counted, loss, 0.0))
    tl.store(counted_ptr + row, counted.to(tl.float32))


@triton.jit
def _reduce_kernel(loss_ptr, counted_ptr, out_ptr, n_rows, MEAN: tl.constexpr,
                   BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    count = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_rows, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        mask = idx < n_rows
        acc += tl.load(loss_ptr + idx, mask=mask, other=0.0)
        count += tl.load(counted_ptr + idx, mask=mask, other=0.0)
    total = tl.sum(acc, axis=0)
    if MEAN:
        total = total / tl.sum(count, axis=0)
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


@triton.jit
def _cast_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    values = tl.load(src_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, values.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, target: torch.Tensor, reduction: str = "mean",
           ignore_index: int = -100, label_smoothing: float = 0.0) -> torch.Tensor:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"unknown reduction {reduction!r}")
    if x.dim() != 2:
        raise ValueError(f"this kernel takes x of shape (N, C), got {tuple(x.shape)}")
    n_rows, n_classes = x.shape
    losses = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    counted = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    if n_rows:
        _row_loss_kernel[(n_rows,)](x, target, losses, counted, n_classes, x.stride(0),
                                    x.stride(1), int(ignore_index), float(label_smoothing),
                                    LOGITS=__LOGITS__, BLOCK=BLOCK)
    if reduction == "none":
        # The row losses, rounded once to x's dtype.
        out = torch.empty(n_rows, dtype=x.dtype, device=x.device)
        _cast_kernel[(triton.cdiv(max(n_rows, 1), BLOCK),)](losses, out, n_rows, BLOCK=BLOCK)
        return out
    out = torch.empty((), dtype=x.dtype, device=x.device)
    _reduce_kernel[(1,)](losses, counted, out, n_rows, MEAN=reduction == "mean", BLOCK=BLOCK)
    return out
