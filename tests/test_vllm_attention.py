"""vLLM attention ops: every shipped kernel passes, and plausible wrong kernels are rejected
(GQA heads mapped the wrong way, the alibi bias dropped, context read past seq_len, the
lse merge without the max subtracted, with the lse weights swapped, or with the lse read
[num_tokens, num_heads]); zero-filled and untouched outputs fail for every op."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

from test_vllm_kv_cache import REJECTED, _controls

OPS = ("paged_attention_v1", "paged_attention_v2", "merge_attn_states")
SPECS = {spec.name: spec for spec in load_registry().operators(["vllm"]) if spec.name in OPS}


def _broken(name: str, old: str, new: str) -> str:
    text = SPECS[name].reference_kernel()
    assert old in text, f"{name}: {old!r} not in the kernel"
    return text.replace(old, new)


@pytest.mark.parametrize("name", OPS)
def test_shipped_kernel_passes(cpu_evaluator, name):
    result = cpu_evaluator.evaluate(f"vllm.{name}", SPECS[name].reference_kernel())
    assert result.verdict == verdicts.PASS, result.message
    assert any(c["status"] == "pass" and c.get("heldout") for c in result.cases)


@pytest.mark.parametrize("control", ("zeros", "untouched"))
@pytest.mark.parametrize("name", OPS)
def test_negative_controls_are_rejected(cpu_evaluator, name, control):
    spec = SPECS[name]
    source = spec.reference_kernel() + _controls(spec.mutated_args)[control]
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict in REJECTED, f"{control}: {result.verdict}: {result.message}"


def test_v2_scratch_buffers_are_not_compared(cpu_evaluator):
    """v2 may leave its partition buffers in any state: zeroing them after the call passes."""
    source = SPECS["paged_attention_v2"].reference_kernel() + _controls((1, 2, 3))["zeros"]
    result = cpu_evaluator.evaluate("vllm.paged_attention_v2", source)
    assert result.verdict == verdicts.PASS, result.message


WRONG = {
    # q head h read against kv head h % num_kv_heads instead of h // group.
    "gqa_interleaved_v1": ("paged_attention_v1", "    q_head_idx = kv_head * group + g\n",
                           "    q_head_idx = g * num_kv_heads + kv_head\n"),
    "gqa_interleaved_v2": ("paged_attention_v2", "        q_head_idx = kv_head * group + g\n",
                           "        q_head_idx = g * tl.num_programs(1) + kv_head\n"),
    # ALiBi slopes ignored.
    "alibi_dropped": ("paged_attention_v1",
                      "            logits += slope[:, None] * (t - seq_len + 1).to(tl.float32)"
                      "[None, :]\n",
                      "            logits += 0.0\n"),
    # Every token of the last block used, not just those before seq_len.
    "whole_last_block": ("paged_attention_v1",
                         "        live = t < seq_len\n",
                         "        live = t < (seq_len + block_size - 1) // block_size * "
                         "block_size\n"),
    # exp(lse) without the max subtracted: overflows for lse near 100.
    "merge_no_max_subtraction": ("merge_attn_states",
                                 "    shift = tl.where(empty, 0.0, max_lse)\n",
                                 "    shift = tl.where(empty, 0.0, 0.0 * max_lse)\n"),
    # The prefix weighted by the suffix's lse and vice versa.
    "merge_lse_swapped": ("merge_attn_states",
                          "    merged = prefix * p_scale[:, None] + suffix * s_scale[:, None]\n",
                          "    merged = prefix * s_scale[:, None] + suffix * p_scale[:, None]\n"),
    # The lse read as [num_tokens, num_heads].
    "merge_lse_transposed": ("merge_attn_states",
                             "    p_lse = tl.load(prefix_lse_ptr + head * num_tokens + t, "
                             "mask=t_ok, other=0.0)\n"
                             "    s_lse = tl.load(suffix_lse_ptr + head * num_tokens + t, "
                             "mask=t_ok, other=0.0)\n",
                             "    p_lse = tl.load(prefix_lse_ptr + t * tl.num_programs(1) + head,"
                             " mask=t_ok, other=0.0)\n"
                             "    s_lse = tl.load(suffix_lse_ptr + t * tl.num_programs(1) + head,"
                             " mask=t_ok, other=0.0)\n"),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_wrong_kernel_is_rejected(cpu_evaluator, case):
    name, old, new = WRONG[case]
    result = cpu_evaluator.evaluate(f"vllm.{name}", _broken(name, old, new))
    assert result.verdict in REJECTED, f"{case}: {result.verdict}: {result.message}"
