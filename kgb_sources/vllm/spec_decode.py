"""vLLM v1's speculative-decoding rejection sampler (vllm/v1/sample/rejection_sampler.py),
with its randomness given as inputs so that the output is exact: the uniform samples of the
accept test and the exponential noise of the recovered-token draw are tensors the inputs
carry, drawn from the seed, and kept clear of the accept boundary so that no rounding can
flip a decision. Token ids are compared exactly."""

from __future__ import annotations

from typing import Any

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.vllm._build import vllm_op

PLACEHOLDER_TOKEN_ID = -1

REJECTION_CASES = (
    ShapeCase("mixed_batch", {"drafts": (2, 0, 3, 1), "vocab": 50, "greedy": (0, 1, 0, 1)}),
    ShapeCase("all_random", {"drafts": (3, 3, 3), "vocab": 200, "greedy": (0, 0, 0)}),
    ShapeCase("ngram_no_draft_probs", {"drafts": (4, 1, 2), "vocab": 129,
                                       "greedy": (0, 0, 1), "ngram": True}),
    ShapeCase("heldout", {"drafts": (1, 4, 2), "vocab": 77, "greedy": (1, 0, 0)},
              heldout=True),
    ShapeCase("eagle_batch", {"drafts": (3,) * 64, "vocab": 32000, "greedy": (0, 1) * 32},
              tier=LARGE),
    ShapeCase("eagle_llama3", {"drafts": (4,) * 32, "vocab": 128256, "greedy": (0,) * 32},
              tier=LARGE),
)

RECOVERED_CASES = (
    ShapeCase("eagle_small", {"drafts": (2, 0, 3), "vocab": 70}),
    ShapeCase("wide_vocab", {"drafts": (1, 2), "vocab": 2100}),
    ShapeCase("ngram", {"drafts": (3, 1, 2), "vocab": 300, "ngram": True}),
    ShapeCase("heldout", {"drafts": (2, 2), "vocab": 513}, heldout=True),
    ShapeCase("eagle_batch", {"drafts": (3,) * 64, "vocab": 32000}, tier=LARGE),
    ShapeCase("llama3_ngram", {"drafts": (4,) * 16, "vocab": 128256, "ngram": True},
              tier=LARGE),
)


def _probs(ctx: InputContext, rows: int, vocab: int) -> Any:
    torch = ctx.torch
    logits = torch.randn((rows, vocab), generator=ctx.generator) * 2.0
    return torch.softmax(logits, dim=-1)


def _common(ctx: InputContext) -> dict[str, Any]:
    torch = ctx.torch
    p = ctx.params
    drafts = list(p["drafts"])
    vocab = p["vocab"]
    tokens = sum(drafts)
    target = _probs(ctx, max(tokens, 1), vocab)[:tokens]
    draft = None if p.get("ngram") else _probs(ctx, max(tokens, 1), vocab)[:tokens]
    # Draft tokens: often the target's argmax (so greedy requests accept some), else random.
    pick = torch.rand((tokens,), generator=ctx.generator) < 0.6
    rand_ids = torch.randint(0, vocab, (tokens,), generator=ctx.generator)
    draft_ids = torch.where(pick, target.argmax(dim=-1), rand_ids)
    cu = torch.cumsum(torch.tensor(drafts, dtype=torch.int64), 0)
    return {"drafts": drafts, "vocab": vocab, "tokens": tokens, "target": target,
            "draft": draft, "draft_ids": draft_ids, "cu": cu}


def _rejection_inputs(ctx: InputContext) -> list[Any]:
    torch = ctx.torch
    c = _common(ctx)
    p = ctx.params
    batch = len(c["drafts"])
    tokens, target, draft, ids = c["tokens"], c["target"], c["draft"], c["draft_ids"]
    rows = torch.arange(tokens)
    q = draft[rows, ids] if draft is not None else torch.ones(tokens)
    ratio = target[rows, ids] / q
    u = torch.rand((tokens,), generator=ctx.generator)
    # Mostly accept-able draws: u spread below and above the ratio, never within 1e-3 of it.
    u = torch.where(torch.rand((tokens,), generator=ctx.generator) < 0.5, u * ratio.clamp(max=1), u)
    near = (u - ratio).abs() < 1e-3
    u = torch.where(near, (ratio - 2e-3).clamp(min=0.0), u)
    u = torch.where((u - ratio).abs() < 1e-3, ratio + 2e-3, u)
    recovered = torch.randint(0, c["vocab"], (tokens,), generator=ctx.generator)
    bonus = torch.randint(0, c["vocab"], (batch, 1), generator=ctx.generator)
    out = torch.randint(-1000, 1000, (batch, max(c["drafts"]) + 1), generator=ctx.generator)
    dev, i32 = ctx.device, torch.int32
    return [out.to(i32).to(dev), c["cu"].to(i32).to(dev), ids.to(i32).to(dev),
            None if draft is None else draft.to(dev), target.to(dev),
            bonus.to(i32).to(dev), recovered.to(i32).to(dev), u.to(dev),
            torch.tensor([bool(g) for g in p["greedy"]]).to(dev), max(c["drafts"])]


def _rejection_reference(output_token_ids, cu_num_draft_tokens, draft_token_ids, draft_probs,
                         target_probs, bonus_token_ids, recovered_token_ids, uniform_probs,
                         is_greedy, max_spec_len):  # noqa: ANN001, ANN202
    import torch

    out = torch.full(output_token_ids.shape, PLACEHOLDER_TOKEN_ID, dtype=torch.int64)
    argmax = target_probs.argmax(dim=-1) if target_probs.numel() else target_probs
    start = 0
    for req, end in enumerate(cu_num_draft_tokens.tolist()):
        rejected = False
        for pos in range(end - start):
            t = start + pos
            draft_id = int(draft_token_ids[t])
            if bool(is_greedy[req]):
                token = int(argmax[t])
                rejected = token != draft_id
            else:
                q = 1.0 if draft_probs is None else float(draft_probs[t, draft_id])
                ratio = (target_probs[t, draft_id] / q).item() if q > 0 else 0.0
                if q > 0 and ratio >= float(uniform_probs[t]):
                    token = draft_id
                else:
                    token, rejected = int(recovered_token_ids[t]), True
            out[req, pos] = token
            if rejected:
                break
        if not rejected:
            out[req, end - start] = int(bonus_token_ids[req, 0])
        start = end
    output_token_ids.copy_(out.to(output_token_ids.dtype))


def _recovered_inputs(ctx: InputContext) -> list[Any]:
    torch = ctx.torch
    c = _common(ctx)
    batch = len(c["drafts"])
    noise = torch.empty((batch, c["vocab"])).exponential_(generator=ctx.generator)
    out = torch.randint(-1000, 1000, (c["tokens"],), generator=ctx.generator)
    dev, i32 = ctx.device, torch.int32
    return [out.to(i32).to(dev), c["cu"].to(i32).to(dev), c["draft_ids"].to(i32).to(dev),
            None if c["draft"] is None else c["draft"].to(dev), c["target"].to(dev),
            noise.to(dev)]


def _recovered_reference(output_token_ids, cu_num_draft_tokens, draft_token_ids, draft_probs,
                         target_probs, q):  # noqa: ANN001, ANN202
    import torch

    out = torch.empty(output_token_ids.shape, dtype=torch.int64)
    start = 0
    for req, end in enumerate(cu_num_draft_tokens.tolist()):
        for t in range(start, end):
            if draft_probs is None:
                prob = target_probs[t].clone()
                prob[int(draft_token_ids[t])] = 0
            else:
                prob = (target_probs[t] - draft_probs[t]).clamp(min=0)
            out[t] = int(torch.argmax(prob / q[req]))
        start = end
    output_token_ids.copy_(out.to(output_token_ids.dtype))


def operators() -> list[OperatorSpec]:
    return [
        vllm_op(
            "rejection_sample",
            signature="kernel(output_token_ids: Tensor, cu_num_draft_tokens: Tensor, "
                      "draft_token_ids: Tensor, draft_probs: Tensor | None, "
                      "target_probs: Tensor, bonus_token_ids: Tensor, "
                      "recovered_token_ids: Tensor, uniform_probs: Tensor, "
                      "is_greedy: Tensor, max_spec_len: int) -> None",
            description="vLLM v1 speculative-decoding rejection sampling (its greedy and "
                        "random rejection kernels together). Request r owns draft positions "
                        "start..end-1 of the flat draft arrays, with end = "
                        "cu_num_draft_tokens[r] (int32 [batch], inclusive cumsum) and start "
                        "the previous request's end (0 for r = 0). draft_token_ids, "
                        "recovered_token_ids int32 [num_tokens]; target_probs, draft_probs "
                        "float32 [num_tokens, vocab] (draft_probs None = n-gram drafting: "
                        "treat every draft probability as 1); uniform_probs float32 "
                        "[num_tokens]; bonus_token_ids int32 [batch, 1]; is_greedy bool "
                        "[batch]. Walk each request's positions in order: greedy request: "
                        "emit argmax(target_probs[t]) (lowest index on ties) and stop after "
                        "emitting it if it differs from the draft token; random request: "
                        "with q = draft prob and p = target prob of the draft token, accept "
                        "(emit the draft token) if q > 0 and p / q >= uniform_probs[t], else "
                        "emit recovered_token_ids[t] and stop. If no position was rejected, "
                        "emit bonus_token_ids[r] after the last draft. Writes "
                        "output_token_ids int32 [batch, max_spec_len + 1]: the emitted ids "
                        "from column 0, and -1 (PLACEHOLDER_TOKEN_ID) in every other column. "
                        "Exact; the uniforms stay at least 1e-3 away from p / q.",
            reference=_rejection_reference,
            make_inputs=_rejection_inputs,
            cases=REJECTION_CASES,
            dtypes=("float32",),
            flops=lambda p: sum(p["drafts"]) * (p["vocab"] + 4),
            bytes_moved=lambda p, size: 4 * sum(p["drafts"]) * p["vocab"] + 16 * sum(
                p["drafts"]),
            tags=("spec_decode", "sampling", "out_param"),
            mutated_args=(0,),
        ),
        vllm_op(
            "sample_recovered_tokens",
            signature="kernel(output_token_ids: Tensor, cu_num_draft_tokens: Tensor, "
                      "draft_token_ids: Tensor, draft_probs: Tensor | None, "
                      "target_probs: Tensor, q: Tensor) -> None",
            description="vLLM v1's recovered-token draw for rejected drafts (its "
                        "sample_recovered_tokens_kernel), with the exponential noise given. "
                        "Request r owns flat draft positions start..end-1, end = "
                        "cu_num_draft_tokens[r] (int32 [batch], inclusive cumsum). For each "
                        "draft position t of request r: residual = max(target_probs[t] - "
                        "draft_probs[t], 0) (float32 [num_tokens, vocab] each), or, when "
                        "draft_probs is None (n-gram drafting), target_probs[t] with the "
                        "entry of draft_token_ids[t] (int32) set to 0; then "
                        "output_token_ids[t] = argmax over the vocab of residual / q[r] "
                        "(q float32 [batch, vocab], positive; lowest index on ties): a draw "
                        "from the normalised residual. Writes output_token_ids int32 "
                        "[num_tokens]; target_probs and every other argument must come back "
                        "unchanged. Exact.",
            reference=_recovered_reference,
            make_inputs=_recovered_inputs,
            cases=RECOVERED_CASES,
            dtypes=("float32",),
            flops=lambda p: 3 * sum(p["drafts"]) * p["vocab"],
            bytes_moved=lambda p, size: 12 * sum(p["drafts"]) * p["vocab"],
            tags=("spec_decode", "sampling", "out_param"),
            mutated_args=(0,),
        ),
    ]
