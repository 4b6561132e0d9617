"""vLLM's sampling ops: repetition penalties applied to the logits in place."""

from __future__ import annotations

from typing import Any

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

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
    ]
