"""A judge's call with newly drawn inputs keeps the drawn set itself as the pristine one and
copies it once, for the reference.

Each copy is one more batch of inputs in the judge's device memory through the call, and a
job's memory decides how many jobs share a device (job_memory.py): on the H100 at d2f204b the
calls after timing, a timed case's inputs held four times over (drawn, pristine, the
reference's, the arguments as the runner returned them), set the judges' peak in 24 of 29
jobs. The drawn set is only read (packed for the runner; a reply naming one of its storages
gets a copy), so it can be the pristine set; what must still hold is that a call which wrote
an argument it should not is caught, against that set.

The runner here is a stand-in that answers as a right kernel would, or writes an input.
"""

from __future__ import annotations

import pytest
import torch

from kgb_core.evaluation import checker, verdicts
from kgb_core.evaluation.baselines import BaselineCache
from kgb_core.evaluation.checker import CallOutcome, CheckSettings, Evaluation
from kgb_core.plugins import load_registry


class _Timer:
    label = "interpreter-wallclock"


def _evaluation(op: str) -> Evaluation:
    registry = load_registry()
    return Evaluation(registry.operator(op), registry.backend("cpu"), "cpu", _Timer(), channel=None,
                      settings=CheckSettings(seeds=[0], timing=False), baselines=BaselineCache())


def _runner(scribble: bool, seen: list[list]):
    """A stand-in runner's call: the negation of its first argument (aten.neg's answer),
    computed on its own copy of what it was handed, as the real runner's arena gives it; with
    ``scribble``, the argument comes back written."""

    def call(inputs, **_):
        seen.append(inputs)
        mine = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
        answer = torch.neg(mine[0])
        if scribble:
            mine[0].add_(1)
        return CallOutcome(answer, mine, launches=1)

    return call


@pytest.fixture
def cloned(monkeypatch):
    """Every tensor tree the checker copies, as it copies it."""
    copies: list = []
    original = checker.clone_tree

    def counting(tree, *args, **kwargs):
        copies.append(tree)
        return original(tree, *args, **kwargs)

    monkeypatch.setattr(checker, "clone_tree", counting)
    return copies


def test_a_trial_copies_its_drawn_inputs_once_and_passes_a_right_answer(cloned):
    evaluation = _evaluation("aten.neg")
    sent: list[list] = []
    evaluation._call = _runner(scribble=False, seen=sent)
    case = next(c for c in evaluation.spec.cases if not c.heldout)
    record, _ = evaluation._trial(case, evaluation.spec.dtypes[0], 0)
    assert record.status == verdicts.PASS, record.message
    (drawn,) = sent
    copies_of_drawn = [tree for tree in cloned if tree is drawn]
    assert len(copies_of_drawn) == 1, "the drawn set is copied once, for the reference"


def test_a_trial_whose_call_wrote_an_input_is_caught_against_the_drawn_set(cloned):
    evaluation = _evaluation("aten.neg")
    evaluation._call = _runner(scribble=True, seen=[])
    case = next(c for c in evaluation.spec.cases if not c.heldout)
    record, _ = evaluation._trial(case, evaluation.spec.dtypes[0], 0)
    assert record.status == verdicts.INPUT_MUTATED, record.message


def test_a_call_with_new_values_copies_them_once_and_catches_a_written_input(cloned):
    evaluation = _evaluation("aten.neg")
    sent: list[list] = []
    evaluation._call = _runner(scribble=False, seen=sent)
    case = next(c for c in evaluation.spec.cases if not c.heldout)
    dtype = evaluation.spec.dtypes[0]
    evaluation._call_with_new_values(case, dtype, 7, "after timing", slot="timed-0",
                                     inputs=evaluation._draw(case, dtype, 6))
    fresh = sent[-1]
    assert len([tree for tree in cloned if tree is fresh]) == 1
    evaluation._call = _runner(scribble=True, seen=[])
    with pytest.raises(checker.CandidateFailure) as caught:
        evaluation._call_with_new_values(case, dtype, 7, "after timing", slot="timed-0",
                                         inputs=evaluation._draw(case, dtype, 6))
    assert caught.value.verdict == verdicts.INPUT_MUTATED, caught.value
