"""A timed case's pristine sets go to the host once handed over, unless its baseline is timed on
them.

The judge keeps the three input sets of each timed case through the exclusive hold, for the
samples' references after it. On a GPU they were device memory, one batch of the job's, though
a baseline reused from the store never touches them; jobs' memory decides how many share the
device, and on the H100 at 7e429d5 39 % of the workers' time went waiting for it. Where no
baseline is measured on them they are now handed over as drawn, on the device, then moved to
the host, and each sample's set is copied back to the device when its reference is computed.

Drawing them on the host instead sent the runner host tensors, which it keeps on the host (a
host tensor among the inputs is one the operator takes there): every timed reference kernel
failed on the H100 at 48964c8 (``results/h100-full-sweep-48964c8-host-sets-broken.txt``).
What the runner is handed is checked here first. This machine has no GPU: "meta" stands for
the device (shapes and dtypes, no values), and the host copies are made by a stand-in.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from kgb_core.evaluation import checker
from kgb_core.evaluation.baselines import BaselineCache
from kgb_core.evaluation.checker import TIMING_SEEDS, CheckSettings, Evaluation
from kgb_core.plugins import load_registry
from kgb_core.timing import Timing


class _Timer:
    label = "cuda-events+l2-flush"


def _evaluation(op: str, baselines: BaselineCache, device: str = "cuda:0",
                **changes) -> Evaluation:
    registry = load_registry()
    spec = dataclasses.replace(registry.operator(op), **changes)
    return Evaluation(spec, registry.backend("cpu"), device, _Timer(),
                      channel=None, settings=CheckSettings(seeds=[0], timing=True),
                      baselines=baselines)


def _first_timed(evaluation: Evaluation):
    case = next(c for c in evaluation.spec.cases if not c.heldout)
    return case, evaluation.spec.dtypes[0]


def _stored(evaluation: Evaluation, case, dtype) -> None:
    timing = Timing(median_ms=0.1, min_ms=0.1, cv=0.0, repetitions=20, label="x")
    evaluation.baselines.get_or_measure(evaluation._baseline_key_of(case, dtype),
                                        lambda: timing)


def test_sets_whose_baseline_is_reused_go_to_the_host():
    evaluation = _evaluation("aten.neg", BaselineCache())
    case, dtype = _first_timed(evaluation)
    assert not evaluation._offloads(case, dtype)  # the baseline is to be measured on them
    _stored(evaluation, case, dtype)
    assert evaluation._offloads(case, dtype)


def test_an_operator_that_times_its_own_baseline_keeps_them_on_the_device():
    """A problem format's own baseline timer (KernelBench's, GPU MODE's) gets the sets."""
    evaluation = _evaluation("aten.neg", BaselineCache(),
                             time_baseline=lambda settings, sets: None)
    case, dtype = _first_timed(evaluation)
    _stored(evaluation, case, dtype)
    assert not evaluation._offloads(case, dtype)


def test_a_cpu_judge_keeps_them_where_they_are():
    evaluation = _evaluation("aten.neg", BaselineCache(), device="cpu")
    case, dtype = _first_timed(evaluation)
    _stored(evaluation, case, dtype)
    assert not evaluation._offloads(case, dtype)


@pytest.fixture
def host_copies(monkeypatch):
    """clone_tree in the checker, with copies to the host of meta tensors made empty."""
    real = checker.clone_tree

    def clone_tree(value, device=None):
        if isinstance(value, torch.Tensor) and value.device.type == "meta" and device == "cpu":
            return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype)
        if isinstance(value, (list, tuple)):
            return type(value)(clone_tree(v, device) for v in value)
        return real(value, device)

    monkeypatch.setattr(checker, "clone_tree", clone_tree)


def _hand_over(factory, monkeypatch):
    evaluation = _evaluation("aten.neg", BaselineCache(), device="meta", make_inputs=factory)
    case, dtype = _first_timed(evaluation)
    _stored(evaluation, case, dtype)
    handed: list[list[str]] = []
    monkeypatch.setattr(Evaluation, "_request", lambda self, payload, inputs=None: handed.append(
        [t.device.type for t in inputs if isinstance(t, torch.Tensor)]) or {})
    return evaluation._hand_over_timed(0, case, dtype), handed


def test_the_runner_is_handed_the_sets_as_drawn_and_the_judge_keeps_them_on_the_host(
        host_copies, monkeypatch):
    entry, handed = _hand_over(lambda ctx: [ctx.torch.zeros(4, device=ctx.device)],
                               monkeypatch)
    assert handed == [["meta"]] * len(TIMING_SEEDS)  # on the device, as drawn
    assert entry.offloaded
    assert all(one[0].device.type == "cpu" for one in entry.pristine)


def test_a_set_with_a_host_input_stays_as_drawn(host_copies, monkeypatch):
    """A host tensor among the inputs is one the operator takes on the host: the sets stay as
    drawn, and copies of them keep each tensor where it is."""
    entry, handed = _hand_over(lambda ctx: [ctx.torch.zeros(4, device=ctx.device),
                                            ctx.torch.zeros(2)], monkeypatch)
    assert handed == [["meta", "cpu"]] * len(TIMING_SEEDS)
    assert not entry.offloaded
    assert [[t.device.type for t in one] for one in entry.pristine] == \
        [["meta", "cpu"]] * len(TIMING_SEEDS)


def test_a_sample_is_compared_on_a_device_copy_of_a_host_set():
    """The sample's inputs are made on the judge's device where the set went to the host."""
    evaluation = _evaluation("aten.neg", BaselineCache(), device="meta")
    host = [torch.arange(12, dtype=torch.float32).reshape(3, 4).t()]
    seen = evaluation._timed_inputs(host, -1, "meta")
    assert seen[0].device.type == "meta"
    assert (seen[0].shape, seen[0].stride()) == (host[0].shape, host[0].stride())
    assert evaluation._timed_inputs(host, -1)[0].device.type == "cpu"  # not moved: as it is
