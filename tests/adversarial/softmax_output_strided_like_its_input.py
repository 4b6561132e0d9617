# op: aten.softmax
# expect: wrong_output
# A thin-case trap, not a trick: in the style of a published row softmax, the output is
# allocated with empty_like before the input is made contiguous, so it keeps a transposed
# input's strides, and the kernel then writes it as if it were contiguous. Right on every
# contiguous case; only a case with a transposed input shows it.
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def kernel(x, dim):
    out = torch.empty_like(x)  # keeps x's strides
    moved = x.movedim(dim, -1).contiguous()
    n_cols = moved.shape[-1] if moved.dim() else 1
    rows = moved.numel() // max(n_cols, 1)
    if dim % max(x.dim(), 1) != x.dim() - 1:
        # A softmax over another dim: computed in a buffer and copied back (right).
        buffer = torch.empty_like(moved)
        _softmax_rows[(rows,)](buffer, moved, n_cols, BLOCK=triton.next_power_of_2(n_cols))
        out.copy_(buffer.movedim(-1, dim))
        return out
    _softmax_rows[(rows,)](out, moved, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out
