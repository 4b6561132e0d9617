# __NAME__: GGML weight blocks times activations quantised on the fly to q8_1, as vLLM's GGUF
# kernels compute it. Per 32-value block of X: d = amax / 127, q = roundf(x / d) (half away
# from zero), d and s = sum(x) kept as fp16; per weight block (fp16 d_w [, m_w], stored
# integers q_w) with sumi = sum q_w * q: Q8_0 d_w*d16*sumi, Q4_0 d_w*(sumi*d16 - 8*s16),
# Q5_0 d_w*(sumi*d16 - 16*s16) (d_w*d16*sum((q_w-16)*q) on the mmq path), Q4_1/Q5_1
# sumi*fp16(d_w*d16) + fp16(m_w*s16); the row's blocks summed in fp32. One program per (output row, block of weight rows).
import torch
import triton
import triton.language as tl


@triton.jit
def _half_at(ptrs, mask):
    lo = tl.load(ptrs, mask=mask, other=0).to(tl.int32)
    hi = tl.load(ptrs + 1, mask=mask, other=0).to(tl.int32)
    return (lo | (hi << 8)).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)


@triton.jit
def _round_half_away(v):
    t = tl.where(v >= 0, tl.floor(v), -tl.floor(-v))
    up = tl.abs(v - t) >= 0.5
    return t + tl.where(up, tl.where(v >= 0, 1.0, -1.0), 0.0)


@triton.jit
def _q8_1_kernel(w_ptr, x_ptr, out_ptr, ids_ptr, rows, cols, top_k, expert_stride,
                 TYPE: tl.constexpr, BLOCK_BYTES: tl.constexpr, MOE: tl.constexpr,
                 MMQ: tl.constexpr, BLOCK_R: tl.constexpr):
    o = tl.program_id(0)
    r = tl.program_id(1) * BLOCK_R + tl.arange(0, BLOCK_R)
    r_ok = r < rows
    if MOE:
        x_row = o // top_k
        w_base = w_ptr + tl.load(ids_ptr + o).to(tl.int64) * expert_stride
    else:
        x_row = o
        w_base = w_ptr
    row_bytes = (cols // 32) * BLOCK_BYTES
    j = tl.arange(0, 32)
    both = r_ok[:, None] & (j[None, :] < 32)
    acc = tl.zeros([BLOCK_R], tl.float32)
    for blk in range(0, cols // 32):
        x = tl.load(x_ptr + x_row.to(tl.int64) * cols + blk * 32 + j).to(tl.float32)
        amax = tl.max(tl.abs(x), axis=0)
        # div_rn: CUDA's float '/' is correctly rounded, Triton's may lower to an approximate
        # division on GPUs, which moves x / d across a .5 and flips q by one (seen on the H200).
        d = tl.math.div_rn(amax, 127.0)
        q = tl.where(amax == 0, 0.0,
                     _round_half_away(tl.math.div_rn(x, tl.where(amax == 0, 1.0, d))))
        d16 = d.to(tl.float16).to(tl.float32)
        s16 = tl.sum(x, axis=0).to(tl.float16).to(tl.float32)
        base = w_base + r.to(tl.int64) * row_bytes + blk * BLOCK_BYTES
        dw = _half_at(base, r_ok)
        if TYPE == 8:  # Q8_0
            qw = tl.load(base[:, None] + 2 + j[None, :], mask=both, other=0)
            qw = qw.to(tl.int8, bitcast=True).to(tl.float32)
            sumi = tl.sum(qw * q[None, :], axis=1)
            acc += dw * d16 * sumi
        else:
            if (TYPE == 3) | (TYPE == 7):
                qs_at = 4
            else:
                qs_at = 2
            if (TYPE == 6) | (TYPE == 7):
                qh = (tl.load(base + qs_at, mask=r_ok, other=0).to(tl.int32)
                      | (tl.load(base + qs_at + 1, mask=r_ok, other=0).to(tl.int32) << 8)
                      | (tl.load(base + qs_at + 2, mask=r_ok, other=0).to(tl.int32) << 16)
                      | (tl.load(base + qs_at + 3, mask=r_ok, other=0).to(tl.int32) << 24))
                qs_at += 4
            byte = tl.load(base[:, None] + qs_at + (j % 16)[None, :], mask=both,
                           other=0).to(tl.int32)
            qw = tl.where(j[None, :] < 16, byte & 0xF, byte >> 4)
            if (TYPE == 6) | (TYPE == 7):
                qw = qw | (((qh[:, None] >> j[None, :]) & 1) << 4)
            sumi = tl.sum(qw.to(tl.float32) * q[None, :], axis=1)
            if TYPE == 2:
                acc += dw * (sumi * d16 - 8.0 * s16)
            elif (TYPE == 6) & MMQ:  # mmq tiles hold q - 16: no block sum
                acc += dw * d16 * tl.sum((qw - 16).to(tl.float32) * q[None, :], axis=1)
            elif TYPE == 6:
                acc += dw * (sumi * d16 - 16.0 * s16)
            else:
                mw = _half_at(base + 2, r_ok)
                dd = (dw * d16).to(tl.float16).to(tl.float32)
                ms = (mw * s16).to(tl.float16).to(tl.float32)
                acc += sumi * dd + ms
    tl.store(out_ptr + o.to(tl.int64) * rows + r, acc.to(out_ptr.dtype.element_ty), mask=r_ok)


_BLOCK_BYTES = {2: 18, 3: 20, 6: 22, 7: 24, 8: 34}


def _launch(W, X, out, ids, rows, top_k, expert_stride, quant_type, moe, outputs,  # noqa: ANN001, ANN202, N803
            mmq=False):  # noqa: ANN001
    cols = X.shape[1]
    block_r = 64 if X.is_cuda else 16
    _q8_1_kernel[(outputs, triton.cdiv(rows, block_r))](
        W, X, out, ids if ids is not None else W, rows, cols, top_k, expert_stride,
        TYPE=int(quant_type), BLOCK_BYTES=_BLOCK_BYTES[int(quant_type)], MOE=moe,
        MMQ=mmq, BLOCK_R=block_r)


__WRAPPER__
