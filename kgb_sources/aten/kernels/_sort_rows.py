# Shared by sort and topk: a rank sort of each row of a contiguous (n_rows, n_cols) matrix.
# Element i of a row goes to position rank(i) = #{j : x[j] before x[i]}, where "before" is
# "smaller" (ascending) or "larger" (descending), and an equal value with a smaller index also
# comes before (so equal values keep their order, as stable=True). Ranks are distinct, so each
# element is stored once, with its index; only ranks < n_keep are stored (k for topk). It uses
# only compares and sums (no tl.sort, which takes seconds per 1024-element block in the
# interpreter) and O(n_cols**2) compares per row, fine for rows of up to 1024.
import torch
import triton
import triton.language as tl

MAX_COLS = 1024


@triton.jit
def _rank_sort_kernel(x_ptr, values_ptr, indices_ptr, n_rows, n_cols, n_keep,
                      DESCENDING: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr,
                      BLOCK_J: tl.constexpr):
    # A program ranks BLOCK_I elements of each of BLOCK_R rows against their whole rows.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    row_mask = rows < n_rows
    i_mask = row_mask[:, None] & (i < n_cols)[None, :]
    row_start = rows * n_cols
    x_i = tl.load(x_ptr + row_start[:, None] + i[None, :], mask=i_mask,
                  other=0.0).to(tl.float32)
    # The whole row at once (BLOCK_J >= n_cols): no loop-carried sum, which Triton 3.6 can
    # fail to compile (see cumsum's kernel).
    j = tl.arange(0, BLOCK_J)
    j_mask = row_mask[:, None] & (j < n_cols)[None, :]
    x_j = tl.load(x_ptr + row_start[:, None] + j[None, :], mask=j_mask, other=0.0).to(tl.float32)
    a = x_i[:, :, None]
    b = x_j[:, None, :]
    if DESCENDING:
        ahead = b > a
    else:
        ahead = b < a
    ahead = ahead | ((b == a) & (j[None, None, :] < i[None, :, None]))
    ahead = ahead & (j < n_cols)[None, None, :]
    rank = tl.sum(ahead.to(tl.int32), axis=2)
    keep = i_mask & (rank < n_keep)
    out = (rows * n_keep)[:, None] + rank
    tl.store(values_ptr + out, x_i.to(values_ptr.dtype.element_ty), mask=keep)
    index = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.int64) + i[None, :]
    tl.store(indices_ptr + out, index, mask=keep)


def sort_rows(x, dim, n_keep, descending):
    """(values, indices) of x sorted along dim, keeping the first n_keep of each row."""
    dim = dim % x.dim()
    rows = x.movedim(dim, -1).contiguous()
    n_cols = rows.shape[-1]
    if n_cols > MAX_COLS:
        raise ValueError(f"this kernel sorts rows of at most {MAX_COLS} elements, got {n_cols}")
    shape = list(rows.shape[:-1]) + [n_keep]
    values = torch.empty(shape, dtype=x.dtype, device=x.device)
    indices = torch.empty(shape, dtype=torch.int64, device=x.device)
    n_rows = rows.numel() // n_cols if n_cols else 0
    if n_rows and n_keep:
        # One (BLOCK_R, BLOCK_I, BLOCK_J) tile of compares, whole rows along J. Triton's CPU
        # interpreter pays mostly per operation, not per element, so there a tile holds up to
        # 256K compares (several rows at a time); a GPU keeps it to 8K so that it fits in
        # registers.
        budget = 262144 if x.device.type == "cpu" else 8192
        block_j = triton.next_power_of_2(n_cols)
        block_i = min(block_j, 256 if x.device.type == "cpu" else 64, max(1, budget // block_j))
        block_r = min(max(1, budget // (block_i * block_j)), triton.next_power_of_2(n_rows))
        grid = (triton.cdiv(n_rows, block_r), triton.cdiv(n_cols, block_i))
        _rank_sort_kernel[grid](rows, values, indices, n_rows, n_cols, n_keep,
                                DESCENDING=descending, BLOCK_R=block_r, BLOCK_I=block_i,
                                BLOCK_J=block_j)
    return values.movedim(-1, dim), indices.movedim(-1, dim)
