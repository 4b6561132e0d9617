"""vLLM's Mamba decode ops (vllm/model_executor/layers/mamba/ops/, vLLM 0.13 semantics):
causal_conv1d_update (conv_state rolled in place) and selective_state_update (SSM state
updated in place, output into an out-parameter). Cache lines are chosen per sequence by an
index tensor whose -1 entries (vLLM's PAD_SLOT_ID) mark padding: those sequences are skipped,
their cache lines left alone and their output rows undefined (not compared)."""

from __future__ import annotations

from typing import Any, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.vllm._build import vllm_op

PAD_SLOT_ID = -1


def _cache_indices(ctx: InputContext, batch: int, lines: int, pads: int) -> Any:
    """Distinct cache lines for the batch, the last `pads` of them (shuffled in) padding."""
    torch = ctx.torch
    chosen = torch.randperm(lines, generator=ctx.generator)[:batch].to(torch.int32)
    if pads:
        where = torch.randperm(batch, generator=ctx.generator)[:pads]
        chosen[where] = PAD_SLOT_ID
    return chosen.to(ctx.device)


def _masked_rows(out: Any, indices: Any) -> Any:
    """out with the rows of padded sequences zeroed: vLLM does not write them."""
    import torch

    if not isinstance(out, torch.Tensor) or indices is None or out.shape[:1] != indices.shape:
        return out
    keep = (indices != PAD_SLOT_ID).reshape(-1, *([1] * (out.dim() - 1)))
    return torch.where(keep, out, torch.zeros_like(out))


# -- causal_conv1d_update ----------------------------------------------------------------------

CONV_UPDATE_CASES = (
    ShapeCase("decode_silu", {"batch": 3, "dim": 100, "width": 4, "seqlen": 1, "lines": 5,
                              "pads": 1, "silu": True, "bias": True, "squeeze": True}),
    ShapeCase("spec_tokens", {"batch": 2, "dim": 64, "width": 4, "seqlen": 3, "lines": 4,
                              "pads": 0, "silu": True, "bias": False}),
    ShapeCase("width3_long", {"batch": 2, "dim": 300, "width": 3, "seqlen": 5, "lines": 3,
                              "pads": 0, "silu": False, "bias": True}),
    ShapeCase("width2", {"batch": 4, "dim": 33, "width": 2, "seqlen": 1, "lines": 6,
                         "pads": 2, "silu": True, "bias": True}),
    ShapeCase("heldout", {"batch": 3, "dim": 70, "width": 4, "seqlen": 2, "lines": 4,
                          "pads": 1, "silu": True, "bias": True}, heldout=True),
    ShapeCase("mamba2_decode", {"batch": 256, "dim": 8192, "width": 4, "seqlen": 1,
                                "lines": 512, "pads": 16, "silu": True, "bias": True,
                                "squeeze": True}, tier=LARGE),
    ShapeCase("mamba2_spec", {"batch": 64, "dim": 8192, "width": 4, "seqlen": 4,
                              "lines": 128, "pads": 0, "silu": True, "bias": True},
              tier=LARGE),
)


def _conv_update_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    b, d, w, length = p["batch"], p["dim"], p["width"], p["seqlen"]
    x = ctx.randn(b, d) if p.get("squeeze") else ctx.randn(b, d, length)
    conv_state = ctx.randn(p["lines"], d, w - 1)
    weight = ctx.randn(d, w, scale=0.5)
    bias = ctx.randn(d, scale=0.5) if p["bias"] else None
    indices = _cache_indices(ctx, b, p["lines"], p["pads"])
    return [x, conv_state, weight, bias, "silu" if p["silu"] else None, indices]


def _conv_update_reference(x, conv_state, weight, bias, activation, conv_state_indices):  # noqa: ANN001, ANN202
    import torch

    squeeze = x.dim() == 2
    x3 = x.unsqueeze(-1) if squeeze else x
    width = weight.shape[1]
    out = torch.zeros(x3.shape, dtype=torch.float32, device=x.device)
    w = weight.float()
    for seq in range(x3.shape[0]):
        line = int(conv_state_indices[seq]) if conv_state_indices is not None else seq
        if line == PAD_SLOT_ID:
            continue
        window = torch.cat([conv_state[line, :, :width - 1].float(), x3[seq].float()], dim=-1)
        taps = window.unfold(-1, width, 1)  # [dim, seqlen, width]
        acc = (taps * w[:, None, :]).sum(-1)
        if bias is not None:
            acc = acc + bias.float()[:, None]
        if activation in ("silu", "swish", True):
            acc = acc * torch.sigmoid(acc)
        out[seq] = acc
        conv_state[line, :, :width - 1] = window[:, window.shape[-1] - (width - 1):].to(
            conv_state.dtype)
    out = out.to(x.dtype)
    return out.squeeze(-1) if squeeze else out


def _conv_update_compared(returned: Any, args: Sequence[Any]) -> Any:
    return (_masked_rows(returned, args[5]), args[1])


# -- selective_state_update ----------------------------------------------------------------

SSU_CASES = (
    ShapeCase("mamba2_small", {"batch": 3, "lines": 5, "pads": 1, "heads": 4, "head_dim": 16,
                               "dstate": 16, "groups": 2, "D": True, "z": True,
                               "softplus": True}),
    ShapeCase("odd_sizes", {"batch": 2, "lines": 2, "pads": 0, "heads": 2, "head_dim": 24,
                            "dstate": 12, "groups": 1, "D": False, "z": False,
                            "softplus": False}),
    ShapeCase("wide_state", {"batch": 2, "lines": 4, "pads": 1, "heads": 3, "head_dim": 8,
                             "dstate": 64, "groups": 3, "D": True, "z": False,
                             "softplus": True}),
    ShapeCase("heldout", {"batch": 3, "lines": 4, "pads": 1, "heads": 2, "head_dim": 20,
                          "dstate": 16, "groups": 2, "D": True, "z": True, "softplus": True},
              heldout=True),
    ShapeCase("mamba2_2_7b_decode", {"batch": 128, "lines": 256, "pads": 8, "heads": 80,
                                     "head_dim": 64, "dstate": 128, "groups": 1, "D": True,
                                     "z": True, "softplus": True}, tier=LARGE),
    ShapeCase("nemotron_h_decode", {"batch": 256, "lines": 256, "pads": 0, "heads": 128,
                                    "head_dim": 64, "dstate": 128, "groups": 8, "D": True,
                                    "z": True, "softplus": True}, tier=LARGE),
)


def _ssu_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    torch = ctx.torch
    b, h, hd, n, g = p["batch"], p["heads"], p["head_dim"], p["dstate"], p["groups"]
    f32 = torch.float32
    state = ctx.randn(p["lines"], h, hd, n)
    x = ctx.randn(b, h, hd)
    if p["softplus"]:
        dt = ctx.randn(b, h, hd, scale=1.0, shift=-1.0)
    else:
        dt = ctx.uniform(b, h, hd, low=0.01, high=0.3)
    A = -torch.exp(ctx.randn(h, hd, n, dtype=f32, scale=0.5))
    B = ctx.randn(b, g, n)
    C = ctx.randn(b, g, n)
    D = ctx.randn(h, hd, dtype=f32) if p["D"] else None
    z = ctx.randn(b, h, hd) if p["z"] else None
    dt_bias = ctx.randn(h, hd, dtype=f32, scale=0.2)
    indices = _cache_indices(ctx, b, p["lines"], p["pads"])
    out = ctx.randn(b, h, hd, scale=100.0)
    return [state, x, dt, A, B, C, D, z, dt_bias, bool(p["softplus"]), indices, None,
            PAD_SLOT_ID, out]


def _ssu_reference(state, x, dt, A, B, C, D, z, dt_bias, dt_softplus, state_batch_indices,
                   dst_state_batch_indices, pad_slot_id, out):  # noqa: ANN001, ANN202
    import torch

    heads, groups = x.shape[1], B.shape[1]
    per_group = heads // groups
    delta = dt.float()
    if dt_bias is not None:
        delta = delta + dt_bias.float()[None]
    if dt_softplus:
        delta = torch.where(delta <= 20.0, torch.log1p(torch.exp(delta)), delta)
    Bh = B.float().repeat_interleave(per_group, dim=1)  # [batch, heads, dstate]
    Ch = C.float().repeat_interleave(per_group, dim=1)
    for seq in range(x.shape[0]):
        line = int(state_batch_indices[seq]) if state_batch_indices is not None else seq
        if line == pad_slot_id:
            continue
        dst = int(dst_state_batch_indices[seq]) if dst_state_batch_indices is not None else line
        dA = torch.exp(A.float() * delta[seq][..., None])
        dBx = Bh[seq][:, None, :] * delta[seq][..., None] * x[seq].float()[..., None]
        new = state[line].float() * dA + dBx
        state[dst] = new.to(state.dtype)
        y = (new * Ch[seq][:, None, :]).sum(-1)
        if D is not None:
            y = y + x[seq].float() * D.float()
        if z is not None:
            zs = z[seq].float()
            y = y * zs * torch.sigmoid(zs)
        out[seq] = y.to(out.dtype)


def _ssu_compared(_returned: Any, args: Sequence[Any]) -> Any:
    return (args[0], _masked_rows(args[13], args[10]))


# -- selective_scan_fwd --------------------------------------------------------------------

SCAN_CASES = (
    ShapeCase("jamba_like", {"batch": 2, "dim": 24, "dstate": 16, "seqlen": 9, "groups": 1,
                             "lines": 3, "pads": 0, "initial": (1, 0), "D": True, "z": True,
                             "bias": True, "softplus": True}),
    ShapeCase("groups_no_z", {"batch": 3, "dim": 16, "dstate": 8, "seqlen": 6, "groups": 2,
                              "lines": 5, "pads": 1, "initial": (0, 1, 1), "D": True,
                              "z": False, "bias": True, "softplus": True}),
    ShapeCase("plain", {"batch": 1, "dim": 40, "dstate": 12, "seqlen": 11, "groups": 1,
                        "lines": 1, "pads": 0, "initial": None, "D": False, "z": False,
                        "bias": False, "softplus": False}),
    ShapeCase("heldout", {"batch": 2, "dim": 20, "dstate": 16, "seqlen": 7, "groups": 2,
                          "lines": 4, "pads": 0, "initial": (1, 1), "D": True, "z": True,
                          "bias": True, "softplus": True}, heldout=True),
    ShapeCase("falcon_mamba_prefill", {"batch": 4, "dim": 8192, "dstate": 16, "seqlen": 2048,
                                       "groups": 1, "lines": 8, "pads": 0,
                                       "initial": (0, 1, 0, 1), "D": True, "z": True,
                                       "bias": True, "softplus": True}, tier=LARGE),
)


def _scan_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    torch = ctx.torch
    b, d, n, length, g = p["batch"], p["dim"], p["dstate"], p["seqlen"], p["groups"]
    f32 = torch.float32
    u = ctx.randn(b, d, length)
    if p["softplus"]:
        delta = ctx.randn(b, d, length, scale=0.5, shift=-1.0)
    else:
        delta = ctx.uniform(b, d, length, low=0.01, high=0.3)
    A = -torch.exp(ctx.randn(d, n, dtype=f32, scale=0.5))
    B = ctx.randn(b, g, n, length)
    C = ctx.randn(b, g, n, length)
    D = ctx.randn(d, dtype=f32) if p["D"] else None
    z = ctx.randn(b, d, length) if p["z"] else None
    delta_bias = ctx.uniform(d, low=0.0, high=0.5, dtype=f32) if p["bias"] else None
    indices = _cache_indices(ctx, b, p["lines"], p["pads"])
    initial = (None if p["initial"] is None
               else torch.tensor([bool(v) for v in p["initial"]]).to(ctx.device))
    states = ctx.randn(p["lines"], d, n)
    return [u, delta, A, B, C, D, z, delta_bias, bool(p["softplus"]), None, indices, initial,
            states, PAD_SLOT_ID]


def _scan_reference(u, delta, A, B, C, D_, z_, delta_bias_, delta_softplus, query_start_loc,
                    cache_indices, has_initial_state, ssm_states, pad_slot_id):  # noqa: ANN001, ANN202
    import torch

    batch, dim, length = u.shape
    groups = B.shape[1]
    dt = delta.float()
    if delta_bias_ is not None:
        dt = dt + delta_bias_.float()[None, :, None]
    if delta_softplus:
        dt = torch.where(dt <= 20.0, torch.log1p(torch.exp(dt)), dt)
    Bd = B.float().repeat_interleave(dim // groups, dim=1)  # [batch, dim, dstate, L]
    Cd = C.float().repeat_interleave(dim // groups, dim=1)
    out = torch.zeros((batch, dim, length), dtype=torch.float32, device=u.device)
    for seq in range(batch):
        line = int(cache_indices[seq]) if cache_indices is not None else seq
        if line == pad_slot_id:
            continue
        if has_initial_state is not None and bool(has_initial_state[seq]):
            x = ssm_states[line].float()
        else:
            x = torch.zeros(ssm_states.shape[1:], dtype=torch.float32, device=u.device)
        for t in range(length):
            x = (torch.exp(dt[seq, :, t, None] * A.float()) * x
                 + (dt[seq, :, t] * u[seq, :, t].float())[:, None] * Bd[seq, :, :, t])
            out[seq, :, t] = (x * Cd[seq, :, :, t]).sum(-1)
        ssm_states[line] = x.to(ssm_states.dtype)
    if D_ is not None:
        out = out + u.float() * D_.float()[None, :, None]
    if z_ is not None:
        zf = z_.float()
        z_.copy_((out * zf * torch.sigmoid(zf)).to(z_.dtype))
    else:
        delta.copy_(out.to(delta.dtype))


def _scan_compared(_returned: Any, args: Sequence[Any]) -> Any:
    """The output (written into z when z is given, else into delta) with padded sequences'
    rows zeroed, and ssm_states."""
    out = args[6] if args[6] is not None else args[1]
    return (_masked_rows(out, args[10]), args[12])


def operators() -> list[OperatorSpec]:
    return [
        vllm_op(
            "causal_conv1d_update",
            signature="kernel(x: Tensor, conv_state: Tensor, weight: Tensor, "
                      "bias: Tensor | None, activation: str | None, "
                      "conv_state_indices: Tensor) -> Tensor",
            description="Mamba causal depthwise conv1d, decode step (vLLM's Triton "
                        "causal_conv1d_update, batch layout). x [batch, dim, seqlen] or "
                        "[batch, dim] (seqlen 1), conv_state [num_cache_lines, dim, width-1], "
                        "weight [dim, width], bias [dim] or None, all one dtype (float32, "
                        "float16, bfloat16); conv_state_indices int32 [batch]: the cache "
                        "line of each sequence, -1 = padding (skip the sequence: its cache "
                        "line is untouched, its output rows are not compared). For sequence "
                        "s with line c, let window = concat(conv_state[c], x[s]) along the "
                        "last axis (length width-1+seqlen); out[s, :, t] = bias + "
                        "sum_j weight[:, j] * window[:, t + j], then x*sigmoid(x) when "
                        "activation == 'silu'; returns out as a new tensor shaped and typed "
                        "like x. conv_state[c] is updated IN PLACE to the last width-1 "
                        "columns of window. Compute in float32. x, weight, bias and "
                        "conv_state_indices must be left unchanged.",
            reference=_conv_update_reference,
            make_inputs=_conv_update_inputs,
            cases=CONV_UPDATE_CASES,
            flops=lambda p: 2 * p["batch"] * p["dim"] * p["seqlen"] * p["width"],
            bytes_moved=lambda p, size: p["batch"] * p["dim"] * (
                2 * p["seqlen"] + 2 * (p["width"] - 1)) * size,
            reduce_dim=lambda p: p["width"],
            tags=("mamba", "inplace"),
            mutated_args=(1,),
            compared=_conv_update_compared,
            vllm_callable="vllm.model_executor.layers.mamba.ops.causal_conv1d."
                          "causal_conv1d_update",
        ),
        vllm_op(
            "selective_state_update",
            signature="kernel(state: Tensor, x: Tensor, dt: Tensor, A: Tensor, B: Tensor, "
                      "C: Tensor, D: Tensor | None, z: Tensor | None, dt_bias: Tensor, "
                      "dt_softplus: bool, state_batch_indices: Tensor, "
                      "dst_state_batch_indices: Tensor | None, pad_slot_id: int, "
                      "out: Tensor) -> None",
            description="Mamba2 selective-state (SSM) decode step (vLLM's Triton "
                        "selective_state_update). state [num_cache_lines, nheads, head_dim, "
                        "dstate]; x, dt, z and out [batch, nheads, head_dim]; B, C [batch, "
                        "ngroups, dstate] (head h uses group h // (nheads / ngroups)); these "
                        "share one dtype (float32, float16 or bfloat16); A [nheads, head_dim, "
                        "dstate], D and dt_bias [nheads, head_dim] are float32; D and z may "
                        "be None. For sequence s with line c = state_batch_indices[s] (int32; "
                        "c == pad_slot_id means skip: state untouched, out rows not "
                        "compared): delta = dt + dt_bias, then softplus(delta) = "
                        "log(1 + exp(delta)) for delta <= 20 (else delta) when dt_softplus; "
                        "new = state[c] * exp(A * delta[..., None]) + B[group][None, :] * "
                        "delta[..., None] * x[..., None]; state[dst] = new IN PLACE (dst = "
                        "dst_state_batch_indices[s] when given, else c); out[s] = sum over "
                        "dstate of new * C[group] (float32 new, before rounding), + x * D, "
                        "times z * sigmoid(z). All in float32, each output rounded once.",
            reference=_ssu_reference,
            make_inputs=_ssu_inputs,
            cases=SSU_CASES,
            flops=lambda p: 7 * p["batch"] * p["heads"] * p["head_dim"] * p["dstate"],
            bytes_moved=lambda p, size: (2 * p["batch"] * p["heads"] * p["head_dim"]
                                         * p["dstate"] * size
                                         + 4 * p["heads"] * p["head_dim"] * p["dstate"]),
            reduce_dim=lambda p: p["dstate"],
            tags=("mamba", "inplace", "out_param"),
            mutated_args=(0, 13),
            compared=_ssu_compared,
            vllm_callable="vllm.model_executor.layers.mamba.ops.mamba_ssm."
                          "selective_state_update",
        ),
        vllm_op(
            "selective_scan_fwd",
            signature="kernel(u: Tensor, delta: Tensor, A: Tensor, B: Tensor, C: Tensor, "
                      "D_: Tensor | None, z_: Tensor | None, delta_bias_: Tensor | None, "
                      "delta_softplus: bool, query_start_loc: Tensor | None, "
                      "cache_indices: Tensor, has_initial_state: Tensor | None, "
                      "ssm_states: Tensor, pad_slot_id: int) -> None",
            description="Mamba1 selective scan, prefill (vLLM's selective_scan_fwd, batch "
                        "layout: query_start_loc is always None here). u, delta, z_ [batch, "
                        "dim, seqlen] and B, C [batch, ngroups, dstate, seqlen] share one "
                        "dtype (float32, float16 or bfloat16), as does ssm_states "
                        "[num_cache_lines, dim, dstate]; A [dim, dstate], D_ and delta_bias_ "
                        "[dim] are float32; D_, z_, delta_bias_ and has_initial_state may be "
                        "None. Channel c uses group c // (dim / ngroups). Sequence s runs on "
                        "cache line l = cache_indices[s] (int32; l == pad_slot_id: skip it, "
                        "line and output rows untouched / not compared). dt = delta + "
                        "delta_bias_, then softplus (log(1 + exp(dt)) for dt <= 20, else dt) "
                        "when delta_softplus. The state x [dim, dstate] starts as "
                        "ssm_states[l] if has_initial_state[s] (bool [batch]) else zeros; "
                        "per step t: x = exp(dt[:, t, None] * A) * x + (dt[:, t] * u[:, t])"
                        "[:, None] * B[group, :, t]; y[:, t] = sum over dstate of x * "
                        "C[group, :, t]. The final x is written IN PLACE to ssm_states[l]. "
                        "out = y + u * D_[:, None]; if z_ is given, out * z_ * sigmoid(z_) is "
                        "written IN PLACE into z_ (delta's contents are then not compared), "
                        "else out is written IN PLACE into delta. All in float32, each "
                        "output rounded once.",
            reference=_scan_reference,
            make_inputs=_scan_inputs,
            cases=SCAN_CASES,
            flops=lambda p: 9 * p["batch"] * p["dim"] * p["dstate"] * p["seqlen"],
            bytes_moved=lambda p, size: (p["batch"] * p["seqlen"] * (4 * p["dim"] + 2 * p[
                "groups"] * p["dstate"]) + 2 * p["batch"] * p["dim"] * p["dstate"]) * size,
            reduce_dim=lambda p: p["dstate"],
            tags=("mamba", "scan", "inplace"),
            mutated_args=(1, 6, 12),
            compared=_scan_compared,
            vllm_callable="vllm._custom_ops.selective_scan_fwd",
        ),
    ]
