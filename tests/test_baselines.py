"""Baseline timings kept for the same operator's next candidates: measured once per (operator,
case, dtype, timer, settings), said to be reused, never shared across settings, and stored
between sweeps where the harness names a file (keyed by the machine's device and versions)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from conftest import kgb
from kgb_core.config import RunConfig
from kgb_core.evaluation.baselines import BaselineCache, BaselineStore
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.evaluation.sandbox import find_sandbox
from kgb_core.plugins import load_registry
from kgb_core.store import ResultStore
from kgb_core.sweep import evaluation_settings, stored_baselines
from kgb_core.timing import Timing


def _timing(ms: float) -> Timing:
    return Timing(median_ms=ms, min_ms=ms, cv=0.0, repetitions=3, label="test")


def test_a_baseline_is_measured_once_per_key_and_the_oldest_goes_first():
    cache = BaselineCache(max_entries=2)
    measured = []

    def measure(ms: float):
        return lambda: (measured.append(ms), _timing(ms))[1]

    first, reused = cache.get_or_measure(cache.key("aten.neg", "c", "float32", "t", {}), measure(1))
    assert not reused and first.timing.median_ms == 1 and first.measured_at.endswith("+00:00")
    again, reused = cache.get_or_measure(cache.key("aten.neg", "c", "float32", "t", {}), measure(9))
    assert reused and again is first and measured == [1]
    other = cache.key("aten.neg", "c", "float32", "t", {"rep_ms": 50})  # other settings
    assert not cache.get_or_measure(other, measure(2))[1]
    cache.get_or_measure(cache.key("aten.neg", "d", "float32", "t", {}), measure(3))
    # Two entries at most: the first key was the oldest, and is measured again.
    assert not cache.get_or_measure(cache.key("aten.neg", "c", "float32", "t", {}),
                                    measure(4))[1]
    assert measured == [1, 2, 3, 4] and cache.hits == 1


def test_a_judge_times_the_baseline_for_its_first_candidate_and_reuses_it_after():
    registry = load_registry()
    source = registry.operator("aten.neg").reference_kernel()
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=True)
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        first = evaluator.evaluate("aten.neg", source)
        second = evaluator.evaluate("aten.neg", source)
    assert first.verdict == second.verdict == "pass"
    assert first.timings and all(not t["reference_reused"] for t in first.timings)
    assert all(t["reference_reused"] for t in second.timings)
    assert [t["reference"] for t in second.timings] == [t["reference"] for t in first.timings]
    assert [t["reference_measured_at"] for t in second.timings] == \
        [t["reference_measured_at"] for t in first.timings]
    # The candidate is timed afresh every time.
    assert second.timings[0]["candidate"] is not None


def test_stored_baselines_outlive_the_judge_and_follow_their_key(tmp_path):
    """A store is read by a later cache (a later sweep); another environment, a retime, or
    a recheck each do what they say."""
    path = tmp_path / "baselines.sqlite"
    key = BaselineCache.key("aten.neg", "c", "float32", "t", {})
    measured = []

    def measure(ms: float):
        return lambda: (measured.append(ms), _timing(ms))[1]

    h200 = {"device_name": "H200", "torch": "2.11"}
    first = BaselineCache(store=BaselineStore(path), environment=h200)
    kept, reused = first.get_or_measure(key, measure(1.0))
    assert not reused and measured == [1.0]

    later = BaselineCache(store=BaselineStore(path), environment=lambda: dict(h200))
    again, reused = later.get_or_measure(key, measure(5.0))
    assert reused and again == kept and measured == [1.0], "a later sweep reuses it"

    other = BaselineCache(store=BaselineStore(path), environment={**h200, "torch": "2.12"})
    assert not other.get_or_measure(key, measure(2.0))[1] and measured == [1.0, 2.0]

    # --retime-baselines: stored before the sweep began, measured again once, then reused.
    retimed = BaselineCache(store=BaselineStore(path), environment=h200,
                            retime_before="9999-01-01T00:00:00+00:00")
    new, reused = retimed.get_or_measure(key, measure(3.0))
    assert not reused and new.timing.median_ms == 3.0
    assert retimed.get_or_measure(key, measure(4.0)) == (new, True) and measured[-1] == 3.0
    assert BaselineCache(store=BaselineStore(path), environment=h200).get_or_measure(
        key, measure(6.0))[0].timing.median_ms == 3.0, "the re-measured one was stored"

    # A recheck times a reused stored baseline again and keeps the stored time for speedups.
    checked = BaselineCache(store=BaselineStore(path), environment=h200, recheck=1.0)
    drift, reused = checked.get_or_measure(key, measure(3.3))
    assert reused and drift.timing.median_ms == 3.0 and drift.recheck_ms == 3.3


def test_would_measure_says_what_the_next_get_or_measure_does(tmp_path, monkeypatch):
    """The judge asks before its exclusive hold, to make a baseline's untimed first call
    beside other judges' checks only where the baseline will be measured: nothing kept, a
    stored one to re-time, or a stored one drawn for a recheck, where the draw made in the
    asking is the one the next get_or_measure follows."""
    path = tmp_path / "baselines.sqlite"
    key = BaselineCache.key("aten.neg", "c", "float32", "t", {})
    measured = []

    def measure(ms: float):
        return lambda: (measured.append(ms), _timing(ms))[1]

    fresh = BaselineCache(store=BaselineStore(path))
    assert fresh.would_measure(key) and fresh.would_measure(key), "asking measures nothing"
    assert measured == [] and not fresh.get_or_measure(key, measure(1.0))[1]
    assert not fresh.would_measure(key), "kept in memory"
    assert not BaselineCache(store=BaselineStore(path)).would_measure(key), "stored"
    assert BaselineCache(store=BaselineStore(path), retime_before="9999-01-01T00:00:00+00:00"
                         ).would_measure(key), "stored, but to be re-timed"

    draws = iter([0.1, 0.9])  # recheck=0.5: the first draw re-times, the second does not
    monkeypatch.setattr("kgb_core.evaluation.baselines._RANDOM",
                        SimpleNamespace(random=lambda: next(draws)))
    rechecked = BaselineCache(store=BaselineStore(path), recheck=0.5)
    assert rechecked.would_measure(key) and rechecked.would_measure(key), "drawn once"
    drift, reused = rechecked.get_or_measure(key, measure(1.1))
    assert reused and drift.recheck_ms == 1.1 and measured == [1.0, 1.1]
    unchecked = BaselineCache(store=BaselineStore(path), recheck=0.5)
    assert not unchecked.would_measure(key)
    kept, reused = unchecked.get_or_measure(key, measure(1.2))
    assert reused and kept.recheck_ms is None and measured == [1.0, 1.1]

    # A baseline of a second a call or more is never drawn: its re-timing would hold the
    # device alone that long, every other judge waiting.
    slow_key = BaselineCache.key("vllm.convert_vertical_slash_indexes", "c", "int32", "t", {})
    BaselineCache(store=BaselineStore(path)).get_or_measure(slow_key, measure(20_000.0))
    monkeypatch.setattr("kgb_core.evaluation.baselines._RANDOM",
                        SimpleNamespace(random=lambda: 0.0))  # every draw re-times
    always = BaselineCache(store=BaselineStore(path), recheck=1.0)
    assert always.would_measure(key) and not always.would_measure(slow_key)
    slow, reused = always.get_or_measure(slow_key, measure(19_000.0))
    assert reused and slow.recheck_ms is None and measured[-1] == 20_000.0


def _reused(db) -> list[bool]:
    with ResultStore(db) as store:
        (row,) = store.results(store.runs()[0]["id"])
    return [t["reference_reused"] for t in json.loads(row["detail"])["timings"]]


def test_kgb_run_stores_baselines_for_the_next_run_and_retimes_on_request(tmp_path):
    stored = tmp_path / "baselines.sqlite"
    runs = [[], [], ["--retime-baselines"]]
    reused, notes = [], []
    for index, extra in enumerate(runs):
        db = tmp_path / f"run{index}.db"
        done = kgb("run", "--backend", "cpu", "--op", "aten.neg", "--seed", "0", "--db", str(db),
                   "--baselines", str(stored), *extra, timeout=300)
        assert done.returncode == 0, done.stderr
        reused.append(_reused(db))
        notes.append(next(line for line in done.stdout.splitlines()
                          if line.startswith("baselines: ")))
    assert reused[0] and not any(reused[0]), "the first run measures"
    count = len(reused[1])
    assert notes[1].startswith(f"baselines: {count} timed cases, 0 measured for their "
                               f"candidate, {count} reused; measured from "), notes[1]
    assert all(reused[1]), "the next run on this machine reuses them"
    assert not any(reused[2]), "--retime-baselines measures again"


def test_where_a_run_keeps_its_baselines(registry, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cpu, config = registry.backend("cpu"), RunConfig()
    assert evaluation_settings(config, cpu).baselines is None, "interpreter timings: none"
    gpu = SimpleNamespace(timings_measure_hardware=True)  # all the choice reads of a backend
    assert evaluation_settings(config, gpu).baselines == str(tmp_path / "kgb" / "baselines.sqlite")
    assert stored_baselines(RunConfig(baselines="none"), gpu) is None
    assert stored_baselines(RunConfig(baselines="b.sqlite", timing=False), cpu) is None
    chosen = evaluation_settings(RunConfig(baselines=str(tmp_path / "b.sqlite"),
                                           retime_baselines=True), cpu)
    assert chosen.baselines == str(tmp_path / "b.sqlite")
    assert chosen.retime_baselines_before.endswith("+00:00")


POISON = '''
import sqlite3

try:  # a candidate that knows where the stored baselines are tries to make them slower
    db = sqlite3.connect({path!r})
    db.execute("UPDATE baselines SET timing = json_set(timing, '$.median_ms', 1000.0)")
    db.commit()
except Exception:
    pass
'''


@pytest.mark.skipif(not find_sandbox().sandboxed, reason="no OS sandbox here")
def test_a_candidate_cannot_slow_the_stored_baselines_down(tmp_path):
    """Stored baselines outlive a sweep, so they are worth forging: a slower stored baseline
    would inflate every later candidate's speedup. The runner never sees the file (masked,
    and the file system is read-only in its sandbox): the attack changes nothing. The static
    screen (which refuses ``import sqlite3``) is off: the sandbox must hold alone."""
    registry = load_registry()
    reference = registry.operator("aten.neg").reference_kernel()
    store = tmp_path / "baselines.sqlite"
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=True, screen=False,
                                  baselines=str(store), baseline_recheck=0.0)
    results = []
    # The attacker's judge reads the stored baselines after its candidate was imported: had
    # the attack worked, its own reference times would read 1000 ms (as they do unsandboxed).
    for source in (reference, POISON.format(path=str(store)) + reference):
        with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
            results.append(evaluator.evaluate("aten.neg", source))
    honest, attacker = results
    assert attacker.verdict == "pass", attacker.message
    stored = [t["reference"]["median_ms"] for t in honest.timings]
    assert all(ms < 1000.0 for ms in stored)
    assert [t["reference"]["median_ms"] for t in attacker.timings] == stored
    assert all(t["reference_reused"] for t in attacker.timings)


def test_an_unsandboxed_judge_keeps_no_stored_baselines(tmp_path, monkeypatch):
    """Without an OS sandbox (``KGB_SANDBOX=none``) a candidate could rewrite the stored
    baselines (as the attack above does when run so), so the judge keeps its own only. (Their
    reuse by a later judge, sandboxed, is test_kgb_run_stores_baselines_...'s.)"""
    monkeypatch.setenv("KGB_SANDBOX", "none")
    registry = load_registry()
    source = registry.operator("aten.neg").reference_kernel()
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=True,
                                  baselines=str(tmp_path / "baselines.sqlite"))
    reused = []
    for _ in range(2):
        with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
            result = evaluator.evaluate("aten.neg", source)
        assert result.verdict == "pass" and result.sandbox == "none"
        reused.append([t["reference_reused"] for t in result.timings])
    assert reused[1] and not any(reused[1]), "the second judge measured afresh"
    assert not (tmp_path / "baselines.sqlite").exists(), "no stored file was even made"
