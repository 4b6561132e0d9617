"""Jobs sharing a device are admitted by the device memory they need, not by count alone
(``devices._DeviceGate`` with ``capacity``, ``job_memory.JobMemory``): on an H100, six judges
ran out of memory in four or five of a sweep's first seven jobs, one cuBLAS copy's job holding
58-64 GiB where the median job held 6.7."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from kgb_core.evaluation import devices, job_memory
from kgb_core.evaluation.devices import DevicePool, EvalJob
from kgb_core.evaluation.evaluator import EvaluationSettings
from kgb_core.evaluation.job_memory import JobMemory, modelled_bytes
from kgb_core.evaluation.peak_store import PeakStore
from kgb_core.operators import ShapeCase
from kgb_core.plugins import load_registry

GIB = 1 << 30


class _Holder:
    """A thread that holds the gate shared with ``need`` bytes until told to leave."""

    def __init__(self, gate: devices._DeviceGate, name: str, need: int | None,
                 order: list[str]) -> None:
        self.inside, self.leave = threading.Event(), threading.Event()

        def hold() -> None:
            with gate.shared(need):
                order.append(name)
                self.inside.set()
                self.leave.wait(10)

        self.thread = threading.Thread(target=hold, daemon=True)
        self.thread.start()

    def end(self) -> None:
        self.leave.set()
        self.thread.join(10)


def _sized_gate() -> devices._DeviceGate:
    """A device's gate that admits jobs by bytes, 10 GiB of them."""
    gate = devices._DeviceGate()
    gate.capacity = 10 * GIB
    return gate


def _settle() -> None:
    time.sleep(0.2)  # long enough for a thread that could enter to have entered


def test_a_job_waits_until_its_bytes_fit_and_later_jobs_wait_behind_it():
    gate, order = _sized_gate(), []
    gate.pass_patience_s = 0.0  # the first in line may not be passed at all
    first = _Holder(gate, "first", 6 * GIB, order)
    first.inside.wait(5)
    second = _Holder(gate, "second", 6 * GIB, order)
    _settle()
    # Small enough to fit beside the first, but it came after the second: it waits its turn,
    # or a stream of small jobs could keep the second out for good.
    third = _Holder(gate, "third", 3 * GIB, order)
    _settle()
    assert order == ["first"] and gate.held_bytes == 6 * GIB
    first.end()
    second.inside.wait(5)
    third.inside.wait(5)
    assert order == ["first", "second", "third"] and gate.held_bytes == 9 * GIB
    second.end()
    third.end()
    assert gate.held_bytes == 0


def test_a_small_job_passes_a_waiting_large_one_only_while_the_large_one_is_patient():
    """Strictly in order, a large job at the head of the line kept every job behind it waiting
    for memory that was free (on an H100, eight workers waited for memory 48 % of their time).
    A later job that fits now may pass it, for ``pass_patience_s`` of the large one's wait;
    after that nothing passes it, and it runs once the jobs under way leave it room."""
    gate, order = _sized_gate(), []
    gate.pass_patience_s = 0.6
    first = _Holder(gate, "first", 6 * GIB, order)
    first.inside.wait(5)
    large = _Holder(gate, "large", 6 * GIB, order)
    _settle()
    passer = _Holder(gate, "passer", 3 * GIB, order)
    assert passer.inside.wait(5)
    assert order == ["first", "passer"] and gate.held_bytes == 9 * GIB
    time.sleep(0.6)  # the large job's patience is spent
    late = _Holder(gate, "late", 1 * GIB, order)
    _settle()
    assert order == ["first", "passer"]  # it would fit, but it may not pass any longer
    first.end()
    assert large.inside.wait(5)
    assert late.inside.wait(5)
    assert order == ["first", "passer", "large", "late"] and gate.passed == 1
    for holder in (passer, large, late):
        holder.end()
    assert gate.held_bytes == 0


def test_a_job_larger_than_the_device_runs_once_the_device_is_empty():
    gate, order = _sized_gate(), []
    small = _Holder(gate, "small", 2 * GIB, order)
    small.inside.wait(5)
    huge = _Holder(gate, "huge", 40 * GIB, order)
    _settle()
    assert order == ["small"]
    small.end()
    huge.inside.wait(5)
    after = _Holder(gate, "after", 1 * GIB, order)
    _settle()
    assert order == ["small", "huge"]  # nothing shares with the job that needs it all
    huge.end()
    after.inside.wait(5)
    after.end()
    assert order == ["small", "huge", "after"]


def test_without_a_known_capacity_needs_are_ignored():
    gate = devices._DeviceGate()
    order: list[str] = []
    holders = [_Holder(gate, name, 100 * GIB, order) for name in ("a", "b", "c")]
    for holder in holders:
        holder.inside.wait(5)
    assert sorted(order) == ["a", "b", "c"] and gate.held_bytes == 0
    for holder in holders:
        holder.end()


def test_running_out_of_memory_lowers_the_count_cap_only_where_bytes_are_not_known():
    share = devices._Share()
    share.peak = 6
    counted = devices._DeviceGate()
    counted.note_out_of_memory(share)
    assert counted.cap == 3
    sized = devices._DeviceGate()
    sized.capacity = 70 * GIB
    sized.note_out_of_memory(share)
    assert sized.cap is None  # the job runs again alone; its peak then is its need


def _spec_with_sizes(registry, sizes):
    """aten.neg with its timed cases replaced by 1-D cases of ``sizes`` elements."""
    spec = registry.operator("aten.neg")
    cases = tuple(ShapeCase(name=f"n{n}", params={"shape": (n,)}, tier="large")
                  for n in sizes)
    return replace(spec, cases=cases, dtypes=("float32",))


def test_the_model_grows_with_an_operators_timed_inputs():
    registry = load_registry()
    quirks = registry.backend("nvidia").quirks
    small = modelled_bytes(_spec_with_sizes(registry, [1 << 20]), quirks)
    large = modelled_bytes(_spec_with_sizes(registry, [1 << 26]), quirks)
    # Three sets of the input and the reference's output, fp32, times the model's factor:
    # aten.neg only reads its argument.
    per_set = 2 * 4 * (1 << 26)
    assert large - job_memory.BASE_BYTES == job_memory.PER_BATCH_BYTE_READ_ONLY * 3 * per_set
    assert job_memory.BASE_BYTES < small < large
    # The same cases for an operator that writes its argument: the larger factor (its
    # baseline is timed on copies of the sets).
    writes = replace(_spec_with_sizes(registry, [1 << 26]), mutated_args=(0,))
    assert modelled_bytes(writes, quirks) - job_memory.BASE_BYTES == \
        job_memory.PER_BATCH_BYTE * 3 * per_set > large - job_memory.BASE_BYTES


def test_an_observed_peak_replaces_the_model_and_an_unknown_operator_gets_the_default():
    registry = load_registry()
    memory = JobMemory(lambda op: registry.operator(op) if op == "aten.neg" else None,
                       registry.backend("nvidia").quirks)
    modelled = memory.need("aten.neg")
    assert modelled > job_memory.BASE_BYTES
    memory.observe("aten.neg", None, None)  # nothing counted: nothing learned
    assert memory.need("aten.neg") == modelled
    memory.observe("aten.neg", 1 * GIB, 2 * GIB)
    assert memory.need("aten.neg") == int(3 * GIB * job_memory.OBSERVED_MARGIN)
    assert memory.need("vllm.nothing_here") == job_memory.UNKNOWN_BYTES


def test_inputs_that_cannot_be_drawn_on_meta_get_the_default():
    registry = load_registry()
    spec = registry.operator("aten.neg")

    def needs_values(ctx):
        return [ctx.randn(4).sum().item()]  # .item() needs a value: none on meta

    quirks = registry.backend("nvidia").quirks
    assert modelled_bytes(replace(spec, make_inputs=needs_values), quirks) == \
        job_memory.UNKNOWN_BYTES


@pytest.fixture
def peakcount(monkeypatch):
    """The test backend that counts peaks and says its device's size, for a real pool."""
    import kgb_test_plugins

    registry = load_registry(extra=[("kgb_test_plugins", kgb_test_plugins)])
    monkeypatch.setenv("KGB_EXTRA_PLUGINS", "kgb_test_plugins")
    monkeypatch.setenv("PYTHONPATH", str(kgb_test_plugins.KERNELS.parent))
    return registry, registry.backend("cpu_peakcount")


def test_a_pool_sizes_its_gate_from_its_judges_and_learns_each_operators_peak(peakcount,
                                                                             tmp_path):
    registry, backend = peakcount
    memory = JobMemory(registry.operator, backend.quirks,
                       store=PeakStore(tmp_path / "baselines.sqlite", backend.name))
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    spec = registry.operator("aten.neg")
    with DevicePool(backend, settings, workers_per_device=2, memory=memory) as pool:
        pool.start()
        gate = pool._gates[None]
        assert gate.capacity == job_memory.shared_capacity(64 << 30, 2)
        result = pool.submit(EvalJob(op=spec.id, source=spec.reference_kernel())).result(120)
    assert result.verdict == "pass", result.message
    observed = result.device_peak_judge_bytes + result.device_peak_runner_bytes
    assert memory.need(spec.id) == int(observed * job_memory.OBSERVED_MARGIN)
    assert gate.held_bytes == 0
    # The machine's next sweep starts from that peak, not from the model.
    later = JobMemory(registry.operator, backend.quirks,
                      store=PeakStore(tmp_path / "baselines.sqlite", backend.name))
    assert later.need(spec.id) == int(observed * job_memory.OBSERVED_MARGIN)
    assert later.sources == {spec.id: "stored"}


def test_a_stored_peak_outranks_the_model_and_stays_with_its_backend(tmp_path):
    registry = load_registry()
    quirks = registry.backend("nvidia").quirks
    path = tmp_path / "baselines.sqlite"
    first = JobMemory(registry.operator, quirks, store=PeakStore(path, "nvidia"))
    modelled = first.need("aten.neg")
    first.observe("aten.neg", 1 * GIB, 1 * GIB)
    first.observe("aten.abs", None, None)  # nothing counted: nothing stored
    assert first.need("aten.neg") == int(2 * GIB * job_memory.OBSERVED_MARGIN)
    assert first.sources["aten.neg"] == "observed"

    again = JobMemory(registry.operator, quirks, store=PeakStore(path, "nvidia"))
    again.prefetch(["aten.neg", "aten.abs", "aten.mm"])  # read ahead: no job admitted by it
    assert again.sources == {}
    assert again.need("aten.neg") == int(2 * GIB * job_memory.OBSERVED_MARGIN)
    assert again.need("aten.abs") == modelled_bytes(registry.operator("aten.abs"), quirks)
    assert again.source_counts() == {"stored": 1, "model": 1}
    # This pool's own observation replaces the stored peak, here and in the file.
    again.observe("aten.neg", 3 * GIB, 0)
    assert again.need("aten.neg") == int(3 * GIB * job_memory.OBSERVED_MARGIN)
    assert PeakStore(path, "nvidia").load() == {"aten.neg": 3 * GIB}

    # Another backend's jobs on the same machine hold other amounts: not read across.
    other = JobMemory(registry.operator, quirks, store=PeakStore(path, "amd"))
    assert other.need("aten.neg") == modelled


def test_a_pool_with_one_worker_a_device_sizes_no_gate(peakcount):
    registry, backend = peakcount
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    with DevicePool(backend, settings, workers_per_device=1,
                    memory=JobMemory(registry.operator, backend.quirks)) as pool:
        pool.start()
        assert pool._gates[None].capacity is None  # nothing shares the device


class _HalfTheDevice(JobMemory):
    """Every job needs 60 % of the gate's capacity: two cannot share the device."""

    capacity = 0

    def need(self, op: str) -> int:
        return int(self.capacity * 0.6)


def test_jobs_too_large_to_share_wait_their_turn_and_say_how_long(peakcount):
    registry, backend = peakcount
    memory = _HalfTheDevice(registry.operator, backend.quirks)
    memory.capacity = job_memory.shared_capacity(64 << 30, 2)
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    # Two operators: one operator's candidates would go to one judge (job_queue.py).
    specs = [registry.operator(op) for op in ("aten.neg", "aten.abs")]
    with DevicePool(backend, settings, workers_per_device=2, memory=memory) as pool:
        pool.start()
        futures = pool.submit_all([EvalJob(op=spec.id, source=spec.reference_kernel())
                                   for spec in specs])
        results = [future.result(120) for future in futures]
        gates = pool.memory_gates()
    assert [r.verdict for r in results] == ["pass", "pass"], [r.message for r in results]
    # One ran while the other waited for it to end: its wait is at least the first's run.
    first, second = sorted(results, key=lambda r: r.memory_wait_s)
    assert first.memory_wait_s < 0.05
    assert second.memory_wait_s >= 0.8 * first.duration_s > 0
    assert gates[0]["memory_waited_s"] == pytest.approx(
        first.memory_wait_s + second.memory_wait_s, abs=0.1)


class _Counted(JobMemory):
    """Counts the needs asked for."""

    asked = 0

    def need(self, op: str) -> int:
        type(self).asked += 1
        return super().need(op)


def test_a_device_of_unknown_size_never_asks_for_needs(registry):
    """The CPU says no size: its pool admits by count and reads no operator on meta (which
    takes seconds of the host for some input makers)."""
    backend = registry.backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    spec = registry.operator("aten.neg")
    with DevicePool(backend, settings, workers_per_device=2,
                    memory=_Counted(registry.operator, backend.quirks)) as pool:
        pool.start()
        result = pool.submit(EvalJob(op=spec.id, source=spec.reference_kernel())).result(120)
    assert result.verdict == "pass", result.message
    assert _Counted.asked == 0 and pool.memory_gates() == []
