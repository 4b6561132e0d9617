"""Several evaluation workers on one device (``--workers-per-device N``): every worker pinned
like its device, each slot named, timed workers given the device's lock, resume across worker
counts."""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
import threading
import time

import pytest

from conftest import kgb
from kgb_core.config import RunConfig, apply_overrides, load_config
from kgb_core.errors import UserError
from kgb_core.evaluation import devices, verdicts
from kgb_core.evaluation.devices import DevicePool, EvalJob
from kgb_core.evaluation.results import EvalResult
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.store import ResultStore
from kgb_core.sweep import plan_sweep, run_sweep

OPS = ["aten.neg", "aten.abs", "aten.relu", "aten.exp"]
UNTIMED = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)


def test_two_workers_on_one_device_pass_every_op_and_both_work(tmp_path, registry):
    db = tmp_path / "two.db"
    args = ["run", "--backend", "cpu", "--db", str(db), "--seed", "0", "--no-timing",
            "--devices", "0", "--workers-per-device", "2", "--concurrency", "2"]
    done = kgb(*args, *(arg for op in OPS for arg in ("--op", op)), timeout=120)
    assert done.returncode == 0, done.stderr
    # "evaluation workers: 0: 2 jobs, busy 41%; 0#2: 2 jobs, busy 37% of 5.2 s"
    jobs = dict(re.findall(r"(0(?:#2)?): (\d+) jobs", done.stdout))
    assert list(jobs) == ["0", "0#2"], done.stdout
    assert all(int(n) for n in jobs.values()), "both workers of the device must have worked"
    assert sum(int(n) for n in jobs.values()) == len(OPS)
    with ResultStore(db) as store:
        (run,) = store.runs()
        rows = store.results(run["id"])
    assert {row["op"]: row["verdict"] for row in rows} == {op: verdicts.PASS for op in OPS}
    assert {json.loads(row["detail"])["evaluated_on"] for row in rows} == {"0", "0#2"}
    evaluation = run["environment"]["evaluation"]
    assert evaluation["workers_per_device"] == 2 and evaluation["devices"] == [0]
    # Both workers are pinned like their device.
    assert [(w["slot"], w["device_index"]) for w in evaluation["workers"]] == \
        [("0", "0"), ("0#2", "0")]

    # The worker count is no part of the plan: one worker resumes the same run.
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM results WHERE op = 'aten.exp'")
    conn.commit()
    conn.close()
    one = plan_sweep(RunConfig(ops=OPS, backend="cpu", seeds=[0], timing=False,
                               timeout_s=60), registry)
    with ResultStore(db) as store:
        resumed = run_sweep(one, registry, store, resume=True)
        assert resumed.run_id == run["id"] and len(store.runs()) == 1
        assert [r.op for r in resumed.results] == ["aten.exp"] and resumed.results[0].passed
    assert [u.slot for u in resumed.usage] == ["0"]


def test_slot_names_are_distinct_and_a_plain_pool_is_unchanged(registry):
    cpu = registry.backend("cpu")
    names = lambda devices, n: [u.slot for u in DevicePool(cpu, UNTIMED, devices,  # noqa: E731
                                                           workers_per_device=n).usage()]
    assert names(None, 1) == ["0"] and names([0, 1], 1) == ["0", "1"]
    assert names(None, 3) == ["0", "0#2", "0#3"]
    assert names([0, 1], 2) == ["0", "0#2", "1", "1#2"]
    plain = DevicePool(cpu, UNTIMED, [0, 1]).describe()
    assert plain == {"executor": "local", "devices": [0, 1]}  # what runs recorded before
    assert DevicePool(cpu, UNTIMED, None, workers_per_device=2).describe() == \
        {"executor": "local", "devices": None, "workers_per_device": 2}


def test_several_timed_workers_per_device_share_the_device_lock(registry):
    """Timed workers on one device take its lock (kgb_core/evaluation/device_lock.py), on
    any backend; one timed worker, or untimed ones, keep the backend's default."""
    cpu = registry.backend("cpu")
    timed = EvaluationSettings(timing=True)
    assert DevicePool(cpu, timed, workers_per_device=2).settings.device_lock is True
    assert DevicePool(cpu, timed, workers_per_device=1).settings.device_lock is None
    assert DevicePool(cpu, UNTIMED, workers_per_device=2).settings.device_lock is None
    assert plan_sweep(RunConfig(ops=["aten.neg"], backend="cpu", workers_per_device=2),
                      registry).config.timing


def test_worker_counts_refused(registry):
    ray = RunConfig(ops=["aten.neg"], backend="cpu", timing=False, workers_per_device=2,
                    executor="ray")
    with pytest.raises(UserError, match="--executor ray.*local executor"):
        plan_sweep(ray, registry)
    with pytest.raises(UserError, match="workers_per_device must be at least 1"):
        apply_overrides(RunConfig(), workers_per_device=0)


def test_the_toml_key(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text("[run]\nworkers_per_device = 3\ndevices = [0]\n"
                    "[evaluation]\ntiming = false\n")
    config = load_config(path)
    assert config.workers_per_device == 3 and config.devices == "0" and not config.timing
    assert RunConfig().workers_per_device == 1
    for value, message in (("\"two\"", "workers_per_device must be int, got str"),
                           ("true", "workers_per_device must be int"),
                           ("0", "workers_per_device must be at least 1")):
        path.write_text(f"[run]\nworkers_per_device = {value}\n")
        with pytest.raises(UserError, match=message):
            load_config(path)


def test_timed_workers_share_a_device_through_the_cli(tmp_path):
    """Two timed workers on one device: both work, every candidate passes with its timings,
    and each worker's judge was handed the device's lock."""
    db = tmp_path / "timed.db"
    done = kgb("run", "--backend", "cpu", "--db", str(db), "--seed", "0", "--devices", "0",
               "--workers-per-device", "2", "--op", "aten.neg", "--op", "aten.abs",
               timeout=300)
    assert done.returncode == 0, done.stderr
    with ResultStore(db) as store:
        (run,) = store.runs()
        rows = store.results(run["id"])
    assert {row["op"]: row["verdict"] for row in rows} == \
        {"aten.neg": verdicts.PASS, "aten.abs": verdicts.PASS}
    details = [json.loads(row["detail"]) for row in rows]
    assert all(detail["timings"] for detail in details)
    assert {detail["evaluated_on"] for detail in details} == {"0", "0#2"}
    refused = kgb("run", "--backend", "cpu", "--op", "aten.neg", "--db", str(tmp_path / "x.db"),
                  "--workers-per-device", "0")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert line == "error: command line: workers_per_device must be at least 1", line
    assert not (tmp_path / "x.db").exists(), "refused before anything ran"


class _SharedDeviceEvaluator:
    """Stands in for a worker on a device shared with others: "big" runs out of the device's
    memory whenever another job runs beside it, and passes alone."""

    running = 0
    lock = threading.Lock()
    overlapped_retries = 0

    def __init__(self, slot):
        self.slot, self.worker_starts, self.worker_info = slot, 1, {}

    def start(self):
        pass

    fits = 1  # how many jobs the device's memory holds at once

    def runs_out(self, op):
        return op == "big"  # only this one needs the device's memory to itself

    def evaluate(self, op, source, method="", sample=0, seeds=None):
        with self.lock:
            type(self).running += 1
            crowded = type(self).running > self.fits
        try:
            time.sleep(0.05)
            with self.lock:
                crowded = crowded or type(self).running > self.fits
            if self.runs_out(op) and crowded:
                return EvalResult(op=op, backend="cpu", verdict=verdicts.HARNESS_ERROR,
                                  message="OutOfMemoryError: CUDA out of memory. Tried to "
                                          "allocate 3.92 GiB")
            return EvalResult(op=op, backend="cpu", verdict=verdicts.PASS)
        finally:
            with self.lock:
                type(self).running -= 1

    def close(self):
        pass

    def kill_worker(self):
        pass


def test_a_job_that_ran_out_of_shared_device_memory_runs_again_alone(monkeypatch, registry):
    monkeypatch.setattr(devices.Evaluator, "for_backend",
                        lambda backend, settings, device=None, slot=None:
                        _SharedDeviceEvaluator(slot))
    pool = DevicePool(registry.backend("cpu"), UNTIMED, [0], workers_per_device=3)
    pool.start()
    try:
        futures = [pool.submit(EvalJob(op=op, source="")) for op in
                   ["small1", "big", "small2", "small3", "small4", "small5"]]
        answers = {f.result(timeout=30).op: f.result() for f in futures}
    finally:
        pool.close()
    assert {op: r.verdict for op, r in answers.items()} == {op: verdicts.PASS for op in answers}
    assert sum(u.retried_alone for u in pool.usage()) == 1
    # The result says it ran twice, and why: its latency holds both tries.
    assert answers["big"].retried_alone.startswith("harness_error: OutOfMemoryError")
    assert all(not r.retried_alone for op, r in answers.items() if op != "big")


def test_the_device_gate_lets_an_exclusive_holder_in_only_alone():
    gate = devices._DeviceGate()
    events: list[str] = []
    shared_in, release_shared = threading.Event(), threading.Event()

    def hold_shared():
        with gate.shared():
            shared_in.set()
            release_shared.wait(5)
            events.append("shared out")

    def hold_exclusive():
        with gate.exclusive():
            events.append("exclusive in")

    first = threading.Thread(target=hold_shared)
    first.start()
    shared_in.wait(5)
    waiter = threading.Thread(target=hold_exclusive)
    waiter.start()
    time.sleep(0.1)
    assert events == []  # the exclusive holder waits for the shared job
    release_shared.set()
    first.join(5)
    waiter.join(5)
    assert events == ["shared out", "exclusive in"]


@pytest.mark.parametrize("verdict, message, retried", [
    (verdicts.OOM, "", True),
    # A runner whose CUDA context could not be made: other judges' runners held the memory.
    (verdicts.CRASHED, "the runner could not set up: AcceleratorError: CUDA error: out of "
                       "memory", True),
    # The runner copying a large case's inputs to the device.
    (verdicts.RUNTIME_ERROR, "OutOfMemoryError: CUDA out of memory. Tried to allocate "
                             "352.00 MiB. GPU 0 has a total capacity of 79.18 GiB", True),
    (verdicts.HARNESS_ERROR, "OutOfMemoryError: CUDA out of memory", True),
    (verdicts.RUNTIME_ERROR, "IndexError: index 7 is out of bounds", False),
    (verdicts.CRASHED, "the runner died with signal SIGSEGV", False),
    # A wrong answer is the kernel's, whatever its message says.
    (verdicts.WRONG_OUTPUT, "out of memory", False),
])
def test_which_failures_are_retried_with_the_device_alone(verdict, message, retried):
    result = EvalResult(op="aten.mm", backend="nvidia", verdict=verdict, message=message)
    assert devices.ran_out_of_device_memory(result) is retried


class _CachingDeviceModule:
    """What release_cached_device_memory uses of torch.cuda, counted."""

    def __init__(self, allocated: int) -> None:
        self.allocated, self.emptied = allocated, 0

    def memory_allocated(self) -> int:
        return self.allocated

    def empty_cache(self) -> None:
        self.emptied += 1


@pytest.mark.parametrize("allocated", [0, 1 << 30])
def test_a_judge_empties_its_device_cache(allocated, monkeypatch):
    from kgb_core import torch_device

    collected = []
    monkeypatch.setattr(torch_device.gc, "collect", lambda: collected.append(1))
    module = _CachingDeviceModule(allocated)
    torch_device.release_cached_device_memory(module)
    assert module.emptied == 1
    assert collected == ([1] if allocated else [])


SOURCE = "def kernel(x):\n    return x\n"


class _ScriptedJudge:
    """Stands in for a judge process: answers each job with the next scripted result."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.jobs_done = 0
        self.job = None
        self.closed = self.killed = False

    def send(self, job):
        self.job = job["job"]

    def read_message(self, timeout):
        verdict, message = self.answers.pop(0)
        return {"type": "result", "job": self.job, "result": EvalResult(
            op="aten.neg", backend="cpu", verdict=verdict, message=message).to_dict()}

    def close(self):
        self.closed = True

    def kill(self):
        self.killed = True


@pytest.mark.parametrize("message,kept", [
    ("the reference raised OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
     True),
    ("the reference raised KeyError: 'shape'", False)])
def test_a_judge_that_ran_out_of_device_memory_is_kept(monkeypatch, message, kept):
    """A harness error replaces the judge (it may be in a bad state), unless the allocator
    explains it: then the judge is fine, and the job's run alone (DevicePool) needs no new one
    (tests/test_judge_after_harness_error.py: a real judge's next job after one that raised)."""
    judge = _ScriptedJudge([(verdicts.HARNESS_ERROR, message), (verdicts.PASS, "")])
    evaluator = Evaluator("cpu", {}, dataclasses.replace(UNTIMED, screen=False))

    def the_scripted_judge():
        evaluator._worker = judge
        return judge

    monkeypatch.setattr(evaluator, "_ensure_worker", the_scripted_judge)
    first = evaluator.evaluate("aten.neg", SOURCE)
    assert first.verdict == verdicts.HARNESS_ERROR
    assert (evaluator._worker is judge) is kept and judge.killed is not kept
    if kept:
        assert evaluator.evaluate("aten.neg", SOURCE).passed and evaluator._worker is judge


class _TwoFitEvaluator(_SharedDeviceEvaluator):
    """A device whose memory holds two jobs: any job with two others beside it runs out."""

    running = 0
    lock = threading.Lock()
    fits = 2

    def runs_out(self, op):
        return True


def test_running_out_of_shared_memory_caps_how_many_share_the_device(monkeypatch, registry):
    """Four workers on a device that holds two jobs: the first crowd runs out, then at most
    two share it, so the later jobs run once each instead of twice."""
    monkeypatch.setattr(devices.Evaluator, "for_backend",
                        lambda backend, settings, device=None, slot=None:
                        _TwoFitEvaluator(slot))
    monkeypatch.setattr(devices, "RAISE_CAP_AFTER", 1000)  # no lift within this test
    pool = DevicePool(registry.backend("cpu"), UNTIMED, [0], workers_per_device=4)
    pool.start()
    try:
        futures = [pool.submit(EvalJob(op=f"op{n}", source="")) for n in range(16)]
        answers = [f.result(timeout=60) for f in futures]
    finally:
        pool.close()
    assert all(r.passed for r in answers), [r.verdict for r in answers]
    usage = pool.usage()
    retried = sum(u.retried_alone for u in usage)
    # Only the jobs of the crowd that first ran out (four at most) ran twice.
    assert 1 <= retried <= 4, retried
    assert {u.sharing_cap for u in usage} == {2}
    assert usage[0].to_dict()["sharing_cap"] == 2


def test_the_sharing_cap_falls_by_memory_and_rises_after_jobs_fit(monkeypatch):
    monkeypatch.setattr(devices, "RAISE_CAP_AFTER", 3)
    gate = devices._DeviceGate()
    alone = devices._Share()
    alone.peak = 1
    gate.note_out_of_memory(alone)
    assert gate.cap is None  # alone, it says nothing about sharing
    crowd = devices._Share()
    crowd.peak = 4
    gate.note_out_of_memory(crowd)
    assert gate.cap == 2
    gate.note_out_of_memory(crowd)  # another job of the same crowd
    assert gate.cap == 2
    gate.note_fit()
    gate.note_fit()
    assert gate.cap == 2
    gate.note_fit()
    assert gate.cap == 3
    crowd.peak = 3
    gate.note_out_of_memory(crowd)
    assert gate.cap == 2
    crowd.peak = 2
    gate.note_out_of_memory(crowd)
    assert gate.cap == 1


def test_the_sharing_cap_is_lifted_once_it_passes_the_most_that_ever_shared(monkeypatch):
    monkeypatch.setattr(devices, "RAISE_CAP_AFTER", 1)
    gate = devices._DeviceGate()
    with gate.shared(), gate.shared() as second:
        assert second.peak == 2
    gate.note_out_of_memory(second)
    assert gate.cap == 1
    gate.note_fit()
    assert gate.cap == 2  # as many as ever shared it
    gate.note_fit()
    assert gate.cap is None  # not 3: only two workers ever held it


def test_a_capped_gate_holds_a_job_back_until_one_leaves():
    gate = devices._DeviceGate()
    crowd = devices._Share()
    crowd.peak = 2
    gate.note_out_of_memory(crowd)  # cap 1
    inside, release, second_in = threading.Event(), threading.Event(), threading.Event()

    def first():
        with gate.shared() as share:
            assert share.peak == 1
            inside.set()
            release.wait(5)

    def second():
        with gate.shared():
            second_in.set()

    one = threading.Thread(target=first)
    one.start()
    inside.wait(5)
    two = threading.Thread(target=second)
    two.start()
    assert not second_in.wait(0.2)
    release.set()
    assert second_in.wait(5)
    one.join(5)
    two.join(5)


class _HeldEvaluator(_SharedDeviceEvaluator):
    """Holds its job until released: what the pool says while it runs."""

    release = threading.Event()

    def evaluate(self, op, source, method="", sample=0, seeds=None):
        self.release.wait(10)
        return EvalResult(op=op, backend="cpu", verdict=verdicts.PASS)


def test_the_pool_says_which_operator_each_worker_runs_now(monkeypatch, registry):
    monkeypatch.setattr(devices.Evaluator, "for_backend",
                        lambda backend, settings, device=None, slot=None: _HeldEvaluator(slot))
    pool = DevicePool(registry.backend("cpu"), UNTIMED, [0], workers_per_device=2)
    pool.start()
    try:
        future = pool.submit(EvalJob(op="aten.softmax", source=""))
        for _ in range(100):
            running = [u.to_dict() for u in pool.usage() if u.running]
            if running:
                break
            time.sleep(0.02)
        assert [u["running"] for u in running] == ["aten.softmax"]
        assert running[0]["running_s"] >= 0
        _HeldEvaluator.release.set()
        assert future.result(timeout=10).passed
        assert not any(u.running for u in pool.usage())
        assert "running" not in pool.usage()[0].to_dict()
    finally:
        _HeldEvaluator.release.set()
        pool.close()
