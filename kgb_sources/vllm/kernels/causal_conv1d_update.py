# causal_conv1d_update: one program per (sequence, channel block). The window is the
# cache line's width-1 saved columns followed by the new tokens; each output token is the
# depthwise dot of width taps (fp32), silu optional. The last width-1 window columns are
# then written back into the cache line, in place. Padded sequences (index -1) are skipped.
import torch
import triton
import triton.language as tl


@triton.jit
def _conv_update_kernel(x_ptr, state_ptr, w_ptr, bias_ptr, idx_ptr, out_ptr, dim, seqlen,
                        stride_state_line, stride_state_dim, stride_state_tok,
                        WIDTH: tl.constexpr, HAS_BIAS: tl.constexpr, SILU: tl.constexpr,
                        BLOCK_D: tl.constexpr, BLOCK_T: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)
    chans = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    cmask = chans < dim
    line = tl.load(idx_ptr + seq).to(tl.int64)
    if line >= 0:
        state_base = state_ptr + line * stride_state_line + chans * stride_state_dim
        x_base = x_ptr + seq * dim * seqlen + chans * seqlen
        if HAS_BIAS:
            b = tl.load(bias_ptr + chans, mask=cmask, other=0.0).to(tl.float32)
        else:
            b = tl.zeros([BLOCK_D], tl.float32)
        for t in range(0, seqlen):
            acc = b
            for j in tl.static_range(WIDTH):
                # window position t + j: state column if < WIDTH-1, else token t+j-(WIDTH-1)
                pos = t + j
                w = tl.load(w_ptr + chans * WIDTH + j, mask=cmask, other=0.0).to(tl.float32)
                if pos < WIDTH - 1:
                    v = tl.load(state_base + pos * stride_state_tok, mask=cmask, other=0.0)
                else:
                    v = tl.load(x_base + (pos - (WIDTH - 1)), mask=cmask, other=0.0)
                acc += v.to(tl.float32) * w
            if SILU:
                acc = acc * tl.sigmoid(acc)
            tl.store(out_ptr + seq * dim * seqlen + chans * seqlen + t,
                     acc.to(out_ptr.dtype.element_ty), mask=cmask)
        # New state: window columns seqlen .. seqlen+WIDTH-2. Read them all first, then
        # write, since some come from the state columns being overwritten.
        ts = tl.arange(0, BLOCK_T)
        src = ts + seqlen
        tmask = ts < WIDTH - 1
        from_state = src < WIDTH - 1
        m2 = cmask[:, None] & tmask[None, :]
        old = tl.load(state_base[:, None] + (src * stride_state_tok)[None, :],
                      mask=m2 & from_state[None, :], other=0.0)
        new = tl.load(x_base[:, None] + (src - (WIDTH - 1))[None, :],
                      mask=m2 & (~from_state)[None, :], other=0.0)
        vals = tl.where(from_state[None, :], old, new.to(old.dtype))
        tl.debug_barrier()
        tl.store(state_base[:, None] + (ts * stride_state_tok)[None, :], vals, mask=m2)


def kernel(x, conv_state, weight, bias, activation, conv_state_indices):
    squeeze = x.dim() == 2
    x3 = (x.unsqueeze(-1) if squeeze else x).contiguous()
    batch, dim, seqlen = x3.shape
    width = weight.shape[1]
    out = torch.empty_like(x3)
    if batch == 0:
        return out.squeeze(-1) if squeeze else out
    block_d = min(triton.next_power_of_2(dim), 256)
    _conv_update_kernel[(batch, triton.cdiv(dim, block_d))](
        x3, conv_state, weight.contiguous(), bias if bias is not None else x3,
        conv_state_indices, out, dim, seqlen, conv_state.stride(0), conv_state.stride(1),
        conv_state.stride(2), WIDTH=width, HAS_BIAS=bias is not None,
        SILU=activation in ("silu", "swish", True), BLOCK_D=block_d,
        BLOCK_T=triton.next_power_of_2(max(width - 1, 1)))
    return out.squeeze(-1) if squeeze else out
