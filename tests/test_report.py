"""Report arithmetic: pass@k per operator, geometric means, fast_p, tokens per solved op."""

from __future__ import annotations

import pytest

from kgb_core.report import render_summary, summarize


def _row(op, verdict, speedup=None, sample=0, tokens=(0, 0), label="cuda-events+l2-flush"):
    return {"op": op, "source": op.split(".")[0], "method": "m", "backend": "b",
            "sample": sample, "verdict": verdict, "speedup": speedup,
            "prompt_tokens": tokens[0], "completion_tokens": tokens[1], "cost_usd": 0.5,
            "timing_label": label}


def test_summary_counts_best_passing_sample_per_operator():
    rows = [
        _row("aten.a", "pass", 4.0, sample=0, tokens=(100, 50)),
        _row("aten.a", "wrong_output", None, sample=1, tokens=(100, 50)),
        _row("aten.b", "pass", 0.5, tokens=(200, 100)),
        _row("aten.c", "timeout", None, tokens=(300, 0)),
        _row("aten.d", "pass", 1.5, sample=0),
        _row("aten.d", "pass", 2.5, sample=1),
    ]
    (summary,) = summarize(rows)
    assert summary.operators == 4 and summary.correct == 3
    assert summary.correct_pct == pytest.approx(75.0)
    # best speedups per correct op: a 4.0, b 0.5, d 2.5
    assert summary.geomean_speedup == pytest.approx((4.0 * 0.5 * 2.5) ** (1 / 3))
    assert summary.fast_1 == pytest.approx(2 / 4)
    assert summary.fast_2 == pytest.approx(2 / 4)
    assert summary.tokens == 900 and summary.tokens_per_solved == pytest.approx(300)
    assert summary.cost_usd == pytest.approx(3.0)


def test_groups_are_split_by_source_method_and_backend():
    rows = [_row("aten.a", "pass", 1.0), _row("vllm.a", "pass", 1.0)]
    assert [s.source for s in summarize(rows)] == ["aten", "vllm"]


def test_interpreter_timings_are_flagged_as_no_performance_result():
    text = render_summary(summarize([_row("aten.a", "pass", 0.01,
                                          label="interpreter-wallclock")]))  # a label of old
    assert "0.01*" in text and "not a chip" in text


def test_what_a_backend_declares_of_its_timings_decides_not_its_timers_name():
    from kgb_core.timing import stored_label

    simulated = stored_label("simulator-cycles", timings_measure_hardware=False)
    assert simulated == "simulator-cycles (no hardware)"
    assert stored_label(simulated, False) == simulated  # marked once
    text = render_summary(summarize([_row("aten.a", "pass", 0.5, label=simulated)]))
    assert "0.5*" in text and "not a chip" in text
    chip = stored_label("cpu-socket-events", timings_measure_hardware=True)
    text = render_summary(summarize([_row("aten.a", "pass", 0.5, label=chip)]))
    assert "0.5*" not in text and "not a chip" not in text


def test_pass_at_k_attempts_cost_per_solved_and_turns_to_pass():
    rows = [
        _row("aten.a", "wrong_output", sample=0, tokens=(100, 0)),
        _row("aten.a", "pass", 2.0, sample=1, tokens=(100, 0)),
        _row("aten.b", "pass", 1.0, sample=0, tokens=(100, 0)),
        _row("aten.b", "pass", 1.0, sample=1, tokens=(100, 0)),
        _row("aten.c", "no_candidate", sample=0),
    ]
    rows[2]["generation"] = '{"first_pass_turn": 3}'
    rows[1]["generation"] = '{"first_pass_turn": 1}'
    (summary,) = summarize(rows)
    assert summary.operators == 3 and summary.attempted == 2 and summary.k == 2
    assert summary.pass_at_1 == pytest.approx(1 / 3)   # only b passed with its first sample
    assert summary.pass_at_k == pytest.approx(2 / 3)
    assert summary.tokens_per_attempted == pytest.approx(200)
    assert summary.cost_per_solved == pytest.approx(5 * 0.5 / 2)
    assert summary.mean_turns_to_pass == pytest.approx(2.0)
