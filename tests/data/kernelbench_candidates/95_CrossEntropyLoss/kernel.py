"""Mean cross-entropy: each program computes logsumexp(row) - row[target] for a block of rows
into a buffer, then one program sums the buffer in blocks and divides by the batch size."""
import torch
import triton
import triton.language as tl


@triton.jit
def _row_losses(logits_ptr, targets_ptr, losses_ptr, n_rows, n_classes,
                BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    row_mask = rows < n_rows
    cols = tl.arange(0, BLOCK_COLS)
    row_base = rows[:, None] * n_classes

    running_max = tl.full([BLOCK_ROWS, BLOCK_COLS], float("-inf"), tl.float32)
    for start in range(0, n_classes, BLOCK_COLS):
        c = start + cols
        mask = row_mask[:, None] & (c[None, :] < n_classes)
        x = tl.load(logits_ptr + row_base + c[None, :], mask=mask,
                    other=float("-inf")).to(tl.float32)
        running_max = tl.maximum(running_max, x)
    row_max = tl.max(running_max, axis=1)
    row_max = tl.where(row_mask, row_max, 0.0)  # rows past the end: no -inf - -inf

    running_sum = tl.zeros([BLOCK_ROWS, BLOCK_COLS], tl.float32)
    for start in range(0, n_classes, BLOCK_COLS):
        c = start + cols
        mask = row_mask[:, None] & (c[None, :] < n_classes)
        x = tl.load(logits_ptr + row_base + c[None, :], mask=mask,
                    other=float("-inf")).to(tl.float32)
        running_sum += tl.where(mask, tl.exp(x - row_max[:, None]), 0.0)
    log_sum = tl.log(tl.where(row_mask, tl.sum(running_sum, axis=1), 1.0)) + row_max

    target = tl.load(targets_ptr + rows, mask=row_mask, other=0).to(tl.int64)
    picked = tl.load(logits_ptr + rows * n_classes + target, mask=row_mask,
                     other=0.0).to(tl.float32)
    tl.store(losses_ptr + rows, log_sum - picked, mask=row_mask)


@triton.jit
def _mean(values_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        mask = start + offs < n
        acc += tl.load(values_ptr + start + offs, mask=mask, other=0.0)
    tl.store(out_ptr, (tl.sum(acc, axis=0) / n).to(out_ptr.dtype.element_ty))


def kernel(predictions, targets):
    predictions = predictions.contiguous()
    targets = targets.contiguous()
    batch, n_classes = predictions.shape
    losses = torch.empty(batch, dtype=torch.float32, device=predictions.device)
    out = torch.empty((), dtype=predictions.dtype, device=predictions.device)
    BLOCK_COLS = min(1024, triton.next_power_of_2(max(n_classes, 1)))
    BLOCK_ROWS = max(1, min(16, 4096 // BLOCK_COLS))
    grid = (max(triton.cdiv(batch, BLOCK_ROWS), 1),)
    _row_losses[grid](predictions, targets, losses, batch, n_classes,
                      BLOCK_ROWS=BLOCK_ROWS, BLOCK_COLS=BLOCK_COLS)
    _mean[(1,)](losses, out, batch, BLOCK=1024)
    return out
