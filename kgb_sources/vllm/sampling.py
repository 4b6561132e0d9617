"""vLLM's sampling ops: repetition penalties applied to the logits in place."""

from __future__ import annotations

from typing import Any

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase, Tolerance

from kgb_sources.vllm._build import vllm_op

REPETITION_CASES = (
    ShapeCase("few_seqs", {"seqs": 3, "vocab": 600}),
    ShapeCase("odd_vocab", {"seqs": 3, "vocab": 1100}),
    ShapeCase("one_seq", {"seqs": 1, "vocab": 2100}),
    ShapeCase("heldout", {"seqs": 2, "vocab": 900}, heldout=True),
    ShapeCase("llama3_batch", {"seqs": 64, "vocab": 128256}, tier=LARGE),
    ShapeCase("qwen_batch", {"seqs": 256, "vocab": 151936}, tier=LARGE),
)


def _repetition_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    s, v = p["seqs"], p["vocab"]
    torch = ctx.torch
    logits = ctx.randn(s, v, scale=3.0)
    prompt_mask = (torch.rand((s, v), generator=ctx.generator) < 0.2).to(ctx.device)
    output_mask = (torch.rand((s, v), generator=ctx.generator) < 0.1).to(ctx.device)
    # Penalties above and below 1 (and exactly 1), so a wrong sign rule shows either way.
    penalties = ctx.uniform(s, low=0.5, high=2.0)
    penalties[0] = 1.0 if s > 2 else penalties[0]
    return [logits, prompt_mask, output_mask, penalties]


def _repetition_reference(logits, prompt_mask, output_mask, repetition_penalties):  # noqa: ANN001, ANN202
    import torch

    penalty = repetition_penalties.float()[:, None].expand_as(logits)
    seen = prompt_mask | output_mask
    x = logits.float()
    scaled = torch.where(x > 0, x / penalty, x * penalty)
    logits.copy_(torch.where(seen, scaled, x).to(logits.dtype))


# -- apply_top_k_top_p -------------------------------------------------------------------

TOPKP_CASES = (
    ShapeCase("top_k_ties", {"seqs": 4, "vocab": 300, "mode": "k", "ties": True}),
    ShapeCase("top_p", {"seqs": 3, "vocab": 500, "mode": "p"}),
    ShapeCase("top_k_and_p", {"seqs": 4, "vocab": 1000, "mode": "kp"}),
    # Past one block (1024 on the CPU): the reference kernel's binary-search path, which the
    # GPU cases take, also runs in the interpreter.
    ShapeCase("two_blocks_kp", {"seqs": 2, "vocab": 1500, "mode": "kp"}),
    ShapeCase("heldout", {"seqs": 3, "vocab": 400, "mode": "kp"}, heldout=True),
    ShapeCase("llama3_batch", {"seqs": 64, "vocab": 128256, "mode": "kp"}, tier=LARGE),
    ShapeCase("qwen_top_k", {"seqs": 128, "vocab": 151936, "mode": "k", "ties": True},
              tier=LARGE),
)


def _top_k_top_p_reference(logits, k, p):  # noqa: ANN001, ANN202
    """vLLM v1's apply_top_k_top_p (vllm/v1/sample/ops/topk_topp_sampler.py): sort
    ascending; top-k masks values below the k-th largest (ties with it kept); top-p masks the
    sorted positions whose cumulative probability is <= 1 - p, never the largest."""
    import torch

    if k is None and p is None:
        return logits.clone()
    logits_sort, logits_idx = logits.sort(dim=-1, descending=False)
    if k is not None:
        kth = logits_sort.gather(1, (logits_sort.size(1) - k.long()).unsqueeze(1))
        logits_sort = logits_sort.masked_fill(logits_sort < kth, -float("inf"))
    if p is not None:
        probs_sum = torch.cumsum(logits_sort.softmax(dim=-1), dim=-1)
        top_p_mask = probs_sum <= 1 - p.unsqueeze(dim=1)
        top_p_mask[:, -1] = False
        logits_sort = logits_sort.masked_fill(top_p_mask, -float("inf"))
    return logits_sort.scatter(dim=-1, index=logits_idx, src=logits_sort)


def _top_k_top_p_inputs(ctx: InputContext) -> list[Any]:
    params = ctx.params
    s, v, mode = params["seqs"], params["vocab"], params["mode"]
    torch = ctx.torch
    if params.get("ties"):
        logits = torch.randint(-6, 7, (s, v), generator=ctx.generator).float() / 2
    else:
        # Distinct values: top-p has one right answer only without ties.
        logits = torch.stack([torch.randperm(v, generator=ctx.generator) for _ in range(s)])
        logits = logits.float() * (8.0 / v) - 4.0
    k = None
    if "k" in mode:
        k = torch.randint(1, v + 1, (s,), generator=ctx.generator)
        k[0] = v  # a row without top-k
        if s > 1:
            k[1] = min(v, 2 * v // 3)
        k = k.to(torch.int32)
    p = None
    if "p" in mode:
        # Put 1 - p halfway between two cumulative sums that are far apart, so that no
        # summation order can move a token across the boundary.
        masked = _top_k_top_p_reference(logits, k, None)
        probs = masked.sort(dim=-1).values.softmax(dim=-1)
        sums = probs.cumsum(dim=-1)
        values = []
        for row in range(s):
            gaps = probs[row, 1:]
            wide = (gaps >= min(1e-3, 0.5 * float(gaps.max()))).nonzero().reshape(-1)
            pick = int(wide[torch.randint(0, wide.numel(), (1,), generator=ctx.generator)])
            values.append(1.0 - float((sums[row, pick] + sums[row, pick + 1]) / 2))
        p = torch.tensor(values, dtype=torch.float32)
        p[-1] = 1.0
    dev = ctx.device
    return [logits.to(dev), None if k is None else k.to(dev), None if p is None else p.to(dev)]


def operators() -> list[OperatorSpec]:
    return [
        vllm_op(
            "apply_repetition_penalties",
            signature="kernel(logits: Tensor, prompt_mask: Tensor, output_mask: Tensor, "
                      "repetition_penalties: Tensor) -> None",
            description="Repetition penalty, in place on logits [num_seqs, vocab_size] "
                        "(float32, float16 or bfloat16). For every token that appears in the "
                        "prompt or the output so far (prompt_mask | output_mask, bool "
                        "[num_seqs, vocab_size]) with p = repetition_penalties[seq] (same "
                        "dtype as logits, [num_seqs]): a positive logit is divided by p, "
                        "any other (zero or negative) logit is multiplied by p; all other "
                        "logits are left as they are. Compute in float32, round once. Only "
                        "logits is written (vLLM's apply_repetition_penalties_cuda, "
                        "torch.ops._C.apply_repetition_penalties_).",
            reference=_repetition_reference,
            make_inputs=_repetition_inputs,
            cases=REPETITION_CASES,
            flops=lambda p: 2 * p["seqs"] * p["vocab"],
            bytes_moved=lambda p, size: p["seqs"] * p["vocab"] * (2 * size + 2),
            tags=("sampling", "inplace"),
            mutated_args=(0,),
            vllm_callable="vllm._custom_ops.apply_repetition_penalties_cuda",
        ),
        vllm_op(
            "apply_top_k_top_p",
            signature="kernel(logits: Tensor, k: Tensor | None, p: Tensor | None) -> Tensor",
            description="vLLM v1's top-k / top-p (nucleus) masking. logits float32 "
                        "[num_seqs, vocab]; k int32 [num_seqs] (1..vocab; vocab = no top-k) or "
                        "None; p float32 [num_seqs] (1.0 = no top-p) or None. Returns a new "
                        "float32 tensor: the logits, with -inf at every masked token. Top-k: "
                        "mask the values strictly below the row's k-th largest value (ties "
                        "with it are kept). Top-p, applied after top-k: with probs = "
                        "softmax of the top-k-masked row (masked entries 0) and tokens in "
                        "ascending logit order, mask every token whose cumulative probability "
                        "(the sum of probs of the tokens at or below it in that order) is <= "
                        "1 - p, except that the largest token is always kept. Inputs with "
                        "top-p have distinct logits and keep 1 - p well away from every "
                        "cumulative sum. logits must be left unchanged. Exact.",
            reference=_top_k_top_p_reference,
            make_inputs=_top_k_top_p_inputs,
            cases=TOPKP_CASES,
            dtypes=("float32",),
            flops=lambda p: 40 * p["seqs"] * p["vocab"],
            bytes_moved=lambda p, size: 2 * p["seqs"] * p["vocab"] * size,
            tags=("sampling",),
            tolerances={"float32": Tolerance(rtol=0.0, atol=0.0)},
            # Timed calls shift the logits instead of scaling them, and leave p as drawn:
            # scaling moved 1 - p next to a cumulative sum, where float32 summation order
            # decides a token (a false wrong_output on the H200, large cases, 2026-12-06).
            timed_variation="shift",
            timed_varied_args=(0,),
            vllm_callable="vllm.v1.sample.ops.topk_topp_sampler.apply_top_k_top_p",
        ),
    ]
