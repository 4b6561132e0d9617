"""A timed case's pristine sets stay on the host unless its baseline is timed on them.

The judge keeps the three input sets of each timed case through the exclusive hold, for the
samples' references after it. On a GPU they were device memory, one batch of the job's, though
a baseline reused from the store never touches them; jobs' memory decides how many share the
device, and on the H100 at 7e429d5 39 % of the workers' time went waiting for it. Where no
baseline is measured on them they are now drawn and kept on the host, and each sample's set is
copied to the device when its reference is computed. This machine has no GPU: the decision is
checked here with a device named, nothing allocated on it; the GPU sweep shows the memory.
"""

from __future__ import annotations

import dataclasses

import torch

from kgb_core.evaluation.baselines import BaselineCache
from kgb_core.evaluation.checker import CheckSettings, Evaluation
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


def test_sets_whose_baseline_is_reused_are_kept_on_the_host():
    evaluation = _evaluation("aten.neg", BaselineCache())
    case, dtype = _first_timed(evaluation)
    assert evaluation._pristine_device(case, dtype) == "cuda:0"  # to be measured on them
    _stored(evaluation, case, dtype)
    assert evaluation._pristine_device(case, dtype) == "cpu"


def test_an_operator_that_times_its_own_baseline_keeps_them_on_the_device():
    """A problem format's own baseline timer (KernelBench's, GPU MODE's) gets the sets."""
    evaluation = _evaluation("aten.neg", BaselineCache(),
                             time_baseline=lambda settings, sets: None)
    case, dtype = _first_timed(evaluation)
    _stored(evaluation, case, dtype)
    assert evaluation._pristine_device(case, dtype) == "cuda:0"


def test_a_cpu_judge_keeps_them_where_they_are():
    evaluation = _evaluation("aten.neg", BaselineCache(), device="cpu")
    case, dtype = _first_timed(evaluation)
    _stored(evaluation, case, dtype)
    assert evaluation._pristine_device(case, dtype) == "cpu"


def test_a_sample_is_compared_on_a_device_copy_of_a_host_set(monkeypatch):
    """The sample's inputs are made on the judge's device whatever the set's place: "meta"
    stands for a device here (the copy keeps its shape, strides and dtype, on meta)."""
    evaluation = _evaluation("aten.neg", BaselineCache(), device="meta")
    host = [torch.arange(12, dtype=torch.float32).reshape(3, 4).t()]
    seen = evaluation._timed_inputs(host, -1)
    assert seen[0].device.type == "meta"
    assert (seen[0].shape, seen[0].stride()) == (host[0].shape, host[0].stride())
    assert host[0].device.type == "cpu"


def test_a_factory_that_cannot_draw_on_the_host_draws_on_the_device():
    """A factory that needs the device (a device-only op) still makes the timed sets."""
    def factory(ctx):
        if ctx.device == "cpu":
            raise RuntimeError("this op runs on the device only")
        return [ctx.torch.zeros(4, device=ctx.device)]

    evaluation = _evaluation("aten.neg", BaselineCache(), device="meta", make_inputs=factory)
    case, dtype = _first_timed(evaluation)
    drawn = evaluation._draw(case, dtype, 0, "cpu")
    assert drawn[0].device.type == "meta"
