# selective_scan_fwd (batch layout): one program per (sequence, channel block) holds the
# fp32 state tile [BLOCK_D, dstate] and walks the sequence step by step; the output is
# written into z (gated) or delta (ungated) in place, each (channel, step) read before it
# is overwritten; the final state goes back to the sequence's cache line.
import torch
import triton
import triton.language as tl


@triton.jit
def _scan_kernel(u_ptr, delta_ptr, A_ptr, B_ptr, C_ptr, D_ptr, z_ptr, bias_ptr, idx_ptr,
                 init_ptr, states_ptr, dim, dstate, seqlen, groups, per_group, pad_slot_id,
                 HAS_D: tl.constexpr, HAS_Z: tl.constexpr, HAS_BIAS: tl.constexpr,
                 HAS_INIT: tl.constexpr, SOFTPLUS: tl.constexpr, BLOCK_D: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)
    ds = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    ns = tl.arange(0, BLOCK_N)
    dmask = ds < dim
    nmask = ns < dstate
    m2 = dmask[:, None] & nmask[None, :]
    line = tl.load(idx_ptr + seq).to(tl.int64)
    if line != pad_slot_id:
        tile = ds[:, None] * dstate + ns[None, :]
        A = tl.load(A_ptr + tile, mask=m2, other=0.0).to(tl.float32)
        state_tile = states_ptr + line * dim * dstate + tile
        x = tl.zeros([BLOCK_D, BLOCK_N], tl.float32)
        if HAS_INIT:
            if tl.load(init_ptr + seq) != 0:
                x = tl.load(state_tile, mask=m2, other=0.0).to(tl.float32)
        if HAS_BIAS:
            bias = tl.load(bias_ptr + ds, mask=dmask, other=0.0).to(tl.float32)
        if HAS_D:
            Dv = tl.load(D_ptr + ds, mask=dmask, other=0.0).to(tl.float32)
        group = ds // per_group
        bc_base = ((seq * groups + group) * dstate)[:, None] + ns[None, :]
        row = (seq * dim + ds) * seqlen
        for t in range(0, seqlen):
            u = tl.load(u_ptr + row + t, mask=dmask, other=0.0).to(tl.float32)
            dt = tl.load(delta_ptr + row + t, mask=dmask, other=0.0).to(tl.float32)
            if HAS_BIAS:
                dt += bias
            if SOFTPLUS:
                dt = tl.where(dt <= 20.0, tl.log(1.0 + tl.exp(dt)), dt)
            Bt = tl.load(B_ptr + bc_base * seqlen + t, mask=m2, other=0.0).to(tl.float32)
            Ct = tl.load(C_ptr + bc_base * seqlen + t, mask=m2, other=0.0).to(tl.float32)
            x = tl.exp(dt[:, None] * A) * x + (dt * u)[:, None] * Bt
            y = tl.sum(x * Ct, axis=1)
            if HAS_D:
                y += u * Dv
            if HAS_Z:
                z = tl.load(z_ptr + row + t, mask=dmask, other=0.0).to(tl.float32)
                tl.store(z_ptr + row + t, (y * z * tl.sigmoid(z)).to(z_ptr.dtype.element_ty),
                         mask=dmask)
            else:
                tl.store(delta_ptr + row + t, y.to(delta_ptr.dtype.element_ty), mask=dmask)
        tl.store(state_tile, x.to(states_ptr.dtype.element_ty), mask=m2)


def kernel(u, delta, A, B, C, D_, z_, delta_bias_, delta_softplus, query_start_loc,
           cache_indices, has_initial_state, ssm_states, pad_slot_id):
    batch, dim, seqlen = u.shape
    groups, dstate = B.shape[1], B.shape[2]
    if batch == 0 or seqlen == 0:
        return None
    block_n = triton.next_power_of_2(dstate)
    block_d = max(1, min(triton.next_power_of_2(dim), 1024 // block_n))
    u_c = u.contiguous()
    init = has_initial_state.contiguous().view(torch.uint8) if has_initial_state is not None \
        else cache_indices
    _scan_kernel[(batch, triton.cdiv(dim, block_d))](
        u_c, delta, A.contiguous(), B.contiguous(), C.contiguous(),
        D_ if D_ is not None else A, z_ if z_ is not None else delta,
        delta_bias_ if delta_bias_ is not None else A, cache_indices, init, ssm_states, dim,
        dstate, seqlen, groups, dim // groups, pad_slot_id, HAS_D=D_ is not None,
        HAS_Z=z_ is not None, HAS_BIAS=delta_bias_ is not None,
        HAS_INIT=has_initial_state is not None, SOFTPLUS=bool(delta_softplus),
        BLOCK_D=block_d, BLOCK_N=block_n)
    return None
