# vLLM hadacore_transform(x, inplace): y = x @ H_n / sqrt(n) along the last dim, H_n the
# Sylvester Hadamard matrix (H[i, j] = (-1)^popcount(i & j)), n a power of two <= 2^15.
# The entries of H are made on the fly from the parity of i & j. n <= 128: one stage, a tile
# of 16 rows times H_n (or a broadcast sum below 16). n >= 256: H_n = H_A (x) H_B with A * B
# = n, so a row seen as an [A, B] matrix X becomes H_A X H_B: two tl.dot stages, the first
# rounded to the dtype (as vLLM rounds between its 16-point stages). fp32 accumulation.
import torch
import triton
import triton.language as tl


@triton.jit
def _hadamard_sign(i, j):
    v = i & j
    v ^= v >> 8
    v ^= v >> 4
    v ^= v >> 2
    v ^= v >> 1
    return 1.0 - 2.0 * (v & 1).to(tl.float32)


@triton.jit
def _small_kernel(x_ptr, out_ptr, rows, scale, N: tl.constexpr, ROWS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    i = tl.arange(0, N)
    mask = r[:, None] < rows
    x = tl.load(x_ptr + r[:, None].to(tl.int64) * N + i[None, :], mask=mask, other=0.0)
    h = _hadamard_sign(i[:, None], i[None, :]).to(x.dtype)
    if N >= 16:
        y = tl.dot(x, h, out_dtype=tl.float32)
    else:
        y = tl.sum(x.to(tl.float32)[:, :, None] * h.to(tl.float32)[None, :, :], axis=1)
    tl.store(out_ptr + r[:, None].to(tl.int64) * N + i[None, :],
             (y * scale).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _kron_kernel(x_ptr, out_ptr, scale_a, scale_b, A: tl.constexpr, B: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    ia = tl.arange(0, A)
    ib = tl.arange(0, B)
    offsets = row * (A * B) + ia[:, None] * B + ib[None, :]
    x = tl.load(x_ptr + offsets)
    h_a = _hadamard_sign(ia[:, None], ia[None, :]).to(x.dtype)
    h_b = _hadamard_sign(ib[:, None], ib[None, :]).to(x.dtype)
    t = (tl.dot(h_a, x, out_dtype=tl.float32) * scale_a).to(x.dtype)
    y = tl.dot(t, h_b, out_dtype=tl.float32) * scale_b
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty))


def kernel(x, inplace):  # noqa: ANN001, ANN201
    n = x.shape[-1]
    rows = x.numel() // n
    source = x.contiguous()
    out = torch.empty_like(source)
    if n <= 128:
        _small_kernel[(triton.cdiv(rows, 16),)](source, out, rows, 1.0 / n ** 0.5, N=n,
                                                ROWS=16)
    else:
        log_n = n.bit_length() - 1
        a = 1 << (log_n // 2)
        b = n // a
        _kron_kernel[(rows,)](source, out, 1.0 / a ** 0.5, 1.0 / b ** 0.5, A=a, B=b,
                              num_warps=8 if n >= 8192 else 4)
    if inplace:
        x.copy_(out.view(x.shape))
        return x
    return out.view(x.shape)
