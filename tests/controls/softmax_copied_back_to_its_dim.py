# op: aten.softmax
# In the style of Triton's fused-softmax tutorial, for a softmax over any dim: the dim moved
# last and made contiguous (a staging copy of the input), one program per row, then the result
# copied back into a new contiguous output in the input's dim order (``out.copy_`` of the
# kernel's buffer seen with the dim moved back): a torch copy that rearranges the kernels'
# own values, which the staging check must not take for torch doing the work.
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(out_ptr, in_ptr, n_cols, in_row_stride, out_row_stride,
                  BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    in_row = in_ptr + row * in_row_stride
    out_row = out_ptr + row * out_row_stride
    cols = tl.arange(0, BLOCK_SIZE)
    running_max = tl.full([BLOCK_SIZE], float("-inf"), tl.float32)
    running_sum = tl.zeros([BLOCK_SIZE], tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        idx = start + cols
        x = tl.load(in_row + idx, mask=idx < n_cols, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(running_max, x)
        scale = tl.where(new_max == float("-inf"), 0.0, tl.exp(running_max - new_max))
        running_sum = running_sum * scale + tl.where(x == float("-inf"), 0.0,
                                                     tl.exp(x - new_max))
        running_max = new_max
    row_max = tl.max(running_max, axis=0)
    row_sum = tl.sum(running_sum * tl.where(running_max == float("-inf"), 0.0,
                                            tl.exp(running_max - row_max)), axis=0)
    for start in range(0, n_cols, BLOCK_SIZE):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(in_row + idx, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) / row_sum
        tl.store(out_row + idx, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x, dim):
    dim = dim % max(x.dim(), 1)
    if x.dim() == 0:
        moved = x.reshape(1, 1)
    else:
        moved = x.movedim(dim, -1).contiguous()
    n_cols = moved.shape[-1]
    rows = moved.reshape(-1, n_cols)
    buffer = torch.empty_like(rows)
    if rows.numel():
        block = min(triton.next_power_of_2(n_cols), 1024)
        _softmax_rows[(rows.shape[0],)](buffer, rows, n_cols, rows.stride(0), buffer.stride(0),
                                        BLOCK_SIZE=block, num_warps=4 if block < 2048 else 8)
    if x.dim() == 0:
        return buffer.reshape(())
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    out.copy_(buffer.reshape(moved.shape).movedim(-1, dim))
    return out
