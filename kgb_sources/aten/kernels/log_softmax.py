# log_softmax(x, dim) = x - max - log(sum(exp(x - max))) along any dim, in fp32 whatever the
# storage dtype.
# x is made contiguous and seen as (outer, N, inner): the softmax runs over N, whose elements
# lie `inner` apart. One program per (outer, inner) row; the row is streamed in BLOCK-sized
# pieces, so rows far longer than a block (a 128k vocabulary) need no more registers.
import torch
import triton
import triton.language as tl


@triton.jit
def _log_softmax_kernel(x_ptr, out_ptr, N, inner, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = (row // inner) * N * inner + row % inner
    cols = tl.arange(0, BLOCK).to(tl.int64)  # idx * inner must not overflow int32
    # Pass 1, online: per lane, the running max m and the sum s of exp(x - m).
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_ptr + base + idx * inner, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # A lane that has seen only padding keeps m = -inf; guard it so -inf - -inf gives no NaN.
        seen = m_new > float("-inf")
        safe = tl.where(seen, m_new, 0.0)
        s = s * tl.exp(m - safe) + tl.where(seen, tl.exp(x - safe), 0.0)
        m = m_new
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
    log_norm = row_max + tl.log(row_sum)
    # Pass 2: subtract the log-normaliser and store in the output's dtype.
    for start in range(0, N, BLOCK):
        idx = start + cols
        mask = idx < N
        x = tl.load(x_ptr + base + idx * inner, mask=mask, other=0.0).to(tl.float32)
        y = x - log_norm
        tl.store(out_ptr + base + idx * inner, y.to(out_ptr.dtype.element_ty), mask=mask)


def _row_layout(shape: torch.Size, dim: int) -> tuple[int, int, int]:
    """(rows, N, inner) of a contiguous tensor seen as (outer, N, inner) around `dim`."""
    shape = tuple(shape) or (1,)  # a 0-d tensor is one row of one element
    dim = dim % len(shape)
    n, inner = shape[dim], 1
    for size in shape[dim + 1:]:
        inner *= size
    rows = 1
    for size in shape:
        rows *= size
    return rows // n, n, inner


def kernel(x: torch.Tensor, dim: int) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    if x.numel() == 0:
        return out
    rows, n, inner = _row_layout(x.shape, dim)
    # The interpreter simulates each program with numpy: keep its blocks small there.
    block = min(triton.next_power_of_2(n), 4096 if x.is_cuda else 1024)
    _log_softmax_kernel[(rows,)](x, out, n, inner, BLOCK=block,
                                num_warps=8 if block >= 2048 else 4)
    return out
