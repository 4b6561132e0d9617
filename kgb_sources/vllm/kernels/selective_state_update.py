# selective_state_update: one program per (sequence, head, head_dim block); the state tile
# [BLOCK_M, dstate] is decayed by exp(A * dt), gets dt * B * x added, is stored back in
# place, and its dot with C (fp32, before rounding) plus x * D, gated by silu(z), is the
# output. Padded sequences (index == pad_slot_id) are skipped.
import torch
import triton
import triton.language as tl


@triton.jit
def _ssu_kernel(state_ptr, x_ptr, dt_ptr, A_ptr, B_ptr, C_ptr, D_ptr, z_ptr, dtb_ptr,
                idx_ptr, dst_ptr, out_ptr, heads, head_dim, dstate, per_group, groups,
                pad_slot_id, HAS_D: tl.constexpr, HAS_Z: tl.constexpr,
                HAS_DTB: tl.constexpr, HAS_DST: tl.constexpr, SOFTPLUS: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(2) * BLOCK_M + tl.arange(0, BLOCK_M)
    ns = tl.arange(0, BLOCK_N)
    rmask = rows < head_dim
    nmask = ns < dstate
    line = tl.load(idx_ptr + seq).to(tl.int64)
    if line != pad_slot_id:
        if HAS_DST:
            dst = tl.load(dst_ptr + seq).to(tl.int64)
        else:
            dst = line
        vec = (seq * heads + head) * head_dim + rows
        x = tl.load(x_ptr + vec, mask=rmask, other=0.0).to(tl.float32)
        dt = tl.load(dt_ptr + vec, mask=rmask, other=0.0).to(tl.float32)
        if HAS_DTB:
            dt += tl.load(dtb_ptr + head * head_dim + rows, mask=rmask, other=0.0).to(tl.float32)
        if SOFTPLUS:
            dt = tl.where(dt <= 20.0, tl.log(1.0 + tl.exp(dt)), dt)
        m2 = rmask[:, None] & nmask[None, :]
        tile = (head * head_dim + rows)[:, None] * dstate + ns[None, :]
        A = tl.load(A_ptr + tile, mask=m2, other=0.0).to(tl.float32)
        group = head // per_group
        gvec = (seq * groups + group) * dstate + ns
        B = tl.load(B_ptr + gvec, mask=nmask, other=0.0).to(tl.float32)
        C = tl.load(C_ptr + gvec, mask=nmask, other=0.0).to(tl.float32)
        line_off = line * heads * head_dim * dstate
        s = tl.load(state_ptr + line_off + tile, mask=m2, other=0.0).to(tl.float32)
        s = s * tl.exp(A * dt[:, None]) + B[None, :] * (dt * x)[:, None]
        tl.store(state_ptr + dst * heads * head_dim * dstate + tile,
                 s.to(state_ptr.dtype.element_ty), mask=m2)
        y = tl.sum(s * C[None, :], axis=1)
        if HAS_D:
            y += x * tl.load(D_ptr + head * head_dim + rows, mask=rmask, other=0.0).to(tl.float32)
        if HAS_Z:
            z = tl.load(z_ptr + vec, mask=rmask, other=0.0).to(tl.float32)
            y = y * z * tl.sigmoid(z)
        tl.store(out_ptr + vec, y.to(out_ptr.dtype.element_ty), mask=rmask)


def kernel(state, x, dt, A, B, C, D, z, dt_bias, dt_softplus, state_batch_indices,
           dst_state_batch_indices, pad_slot_id, out):
    batch, heads, head_dim = x.shape
    groups, dstate = B.shape[1], B.shape[2]
    if batch == 0:
        return None
    block_n = triton.next_power_of_2(dstate)
    block_m = max(1, min(triton.next_power_of_2(head_dim), 1024 // block_n))
    x_c = x.contiguous()
    _ssu_kernel[(batch, heads, triton.cdiv(head_dim, block_m))](
        state, x_c, dt.contiguous(), A.contiguous(), B.contiguous(), C.contiguous(),
        D if D is not None else x_c, z.contiguous() if z is not None else x_c,
        dt_bias if dt_bias is not None else x_c, state_batch_indices,
        dst_state_batch_indices if dst_state_batch_indices is not None else state_batch_indices,
        out, heads, head_dim, dstate, heads // groups, groups, pad_slot_id,
        HAS_D=D is not None, HAS_Z=z is not None, HAS_DTB=dt_bias is not None,
        HAS_DST=dst_state_batch_indices is not None, SOFTPLUS=bool(dt_softplus),
        BLOCK_M=block_m, BLOCK_N=block_n)
    return None
