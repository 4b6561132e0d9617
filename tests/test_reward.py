"""kgb_core.reward: a cheat earns less than an honest failure, a pass more, speed counts only
where timings measure a chip, and what is not the candidate's doing earns nothing."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.results import EvalResult
from kgb_core.reward import CHEATS, RewardRecipe, default_recipe


def _result(verdict: str, **fields) -> EvalResult:
    return EvalResult(op="aten.softmax", backend=fields.pop("backend", "nvidia"),
                      verdict=verdict, **fields)


def test_a_cheat_earns_less_than_an_honest_failure_and_a_pass_more():
    cheat = default_recipe(_result(verdicts.REFERENCE_USED))
    wrong = default_recipe(_result(verdicts.WRONG_OUTPUT))
    right = default_recipe(_result(verdicts.PASS))
    assert cheat < wrong < right
    assert all(default_recipe(_result(v)) == cheat for v in CHEATS)


def test_speed_counts_on_a_chip_clipped_and_never_below_a_failure():
    fast = default_recipe(_result(verdicts.PASS, speedup=4.0))
    assert fast == pytest.approx(1.0 + 0.5 * 2)
    assert default_recipe(_result(verdicts.PASS, speedup=1e9)) == pytest.approx(1.0 + 1.5)
    slow = default_recipe(_result(verdicts.PASS, speedup=1e-9))
    assert slow == pytest.approx(0.5) and slow > default_recipe(_result(verdicts.RUNTIME_ERROR))


def test_no_speed_bonus_where_timings_measure_no_chip():
    assert default_recipe(_result(verdicts.PASS, backend="cpu", speedup=50.0)) == 1.0
    assert default_recipe(_result(verdicts.PASS, backend="cpu", emulates="nvidia",
                                  speedup=50.0)) == 1.0
    assert default_recipe(_result(verdicts.PASS, backend="no-such-chip", speedup=50.0)) == 1.0


def test_what_is_not_the_candidates_doing_earns_nothing_and_a_served_dict_works_too():
    assert default_recipe(_result(verdicts.HARNESS_ERROR)) is None
    assert default_recipe(_result(verdicts.SKIPPED_DENIED)) is None
    served = {**_result(verdicts.PASS, speedup=2.0).to_dict(), "request_id": "abc"}
    assert RewardRecipe(speed_weight=1.0)(served) == pytest.approx(2.0)
