"""The device's lock (kgb_core/evaluation/device_lock.py) between real processes: a timing
has the device to itself, checks share it, a waiting timing goes before new checks, and a
judge's timing waits for another judge's check step and still passes."""

from __future__ import annotations

import fcntl
import multiprocessing
import time
from pathlib import Path

import pytest

from kgb_core.evaluation.device_lock import DeviceLock

_CONTEXT = multiprocessing.get_context("spawn")


def _hold(path: str, mode: str, seconds: float, taken, events) -> None:
    lock = DeviceLock(path)
    with getattr(lock, mode)():
        events.put((mode, "taken", time.monotonic()))
        taken.set()
        time.sleep(seconds)
        events.put((mode, "released", time.monotonic()))


# Every event handed to a child, kept for the module's life: a spawned child rebuilds its
# event from the parent's semaphore, which is gone once the parent drops the event (a caller
# that wrote ``process, _ = _start(...)`` twice dropped the first, and its child then failed
# to start with FileNotFoundError).
_KEPT: list = []


def _start(path: Path, mode: str, seconds: float, events):
    taken = _CONTEXT.Event()
    _KEPT.append(taken)
    process = _CONTEXT.Process(target=_hold, args=(str(path), mode, seconds, taken, events))
    process.start()
    return process, taken


def _drain(events, count: int) -> list[tuple[str, str, float]]:
    return sorted((events.get(timeout=30) for _ in range(count)), key=lambda e: e[2])


def test_a_timing_excludes_checks_and_checks_share(tmp_path):
    path, events = tmp_path / "dev.lock", _CONTEXT.Queue()
    timing, taken = _start(path, "exclusive", 1.0, events)
    assert taken.wait(30)
    checks = [_start(path, "shared", 0.5, events) for _ in range(2)]
    for process in (timing, *(check for check, _ in checks)):
        process.join(30)
    order = _drain(events, 6)
    assert order[:2] == [("exclusive", "taken", order[0][2]),
                         ("exclusive", "released", order[1][2])], order
    # Both checks held it at once: each was taken before either was released.
    assert [(mode, what) for mode, what, _ in order[2:]] == \
        [("shared", "taken")] * 2 + [("shared", "released")] * 2, order


def test_a_waiting_timing_goes_before_new_checks(tmp_path):
    path, events = tmp_path / "dev.lock", _CONTEXT.Queue()
    first, taken = _start(path, "shared", 1.5, events)
    assert taken.wait(30)
    timing, timing_taken = _start(path, "exclusive", 0.5, events)
    time.sleep(0.5)  # the timing now waits on the first check
    late, late_taken = _start(path, "shared", 0.1, events)
    for process in (first, timing, late):
        process.join(30)
    order = [(mode, what) for mode, what, _ in _drain(events, 6)]
    assert order == [("shared", "taken"), ("shared", "released"), ("exclusive", "taken"),
                     ("exclusive", "released"), ("shared", "taken"), ("shared", "released")]


def test_timings_that_wait_together_go_before_the_checks_between_them(tmp_path):
    """A check holds the device; a timing waits, then a check, then a second timing. Both
    timings go before the waiting check: had the check gone between them, the second timing
    would have waited for it to end, one more time every other judge stands still."""
    path, events = tmp_path / "dev.lock", _CONTEXT.Queue()
    first, taken = _start(path, "shared", 1.0, events)
    assert taken.wait(30)
    timing, _ = _start(path, "exclusive", 0.3, events)
    time.sleep(0.3)
    check, _ = _start(path, "shared", 0.1, events)
    time.sleep(0.3)
    second, _ = _start(path, "exclusive", 0.3, events)
    for process in (first, timing, check, second):
        process.join(30)
    order = [(mode, what) for mode, what, _ in _drain(events, 8)]
    assert order == [("shared", "taken"), ("shared", "released")] \
        + [("exclusive", "taken"), ("exclusive", "released")] * 2 \
        + [("shared", "taken"), ("shared", "released")], order


def test_the_wait_to_hold_alone_is_counted_apart(tmp_path):
    """A timing that waits for a check under way counts that wait twice: in waited_s, and in
    waited_alone_s, the part a sweep's report names (what the checks under way cost it)."""
    path, events = tmp_path / "dev.lock", _CONTEXT.Queue()
    check, taken = _start(path, "shared", 1.0, events)
    assert taken.wait(30)
    lock = DeviceLock(path)
    with lock.exclusive():
        pass
    check.join(30)
    assert 0.5 <= lock.waited_alone_s == lock.waited_s
    with lock.shared():  # no one else holds it: no wait, and none to hold alone
        pass
    assert lock.waited_alone_s <= lock.waited_s < lock.waited_alone_s + 0.5
    lock.close()


def _gather_and_time(path: str, gather_s: float, events) -> None:
    lock = DeviceLock(path, gather_s=gather_s)
    began = time.monotonic()
    with lock.exclusive():
        events.put(("gatherer", "taken", time.monotonic()))
    events.put(("gatherer", "gathered", lock.gathered_s))
    events.put(("gatherer", "began", began))


def test_a_gathering_timing_waits_for_company_holding_nothing_then_times_alone(tmp_path):
    """No other timing comes: it waits its gathering seconds, holding nothing (a check that
    comes meanwhile takes the device at once), and then holds the device alone."""
    path, events = tmp_path / "dev.lock", _CONTEXT.Queue()
    gatherer = _CONTEXT.Process(target=_gather_and_time, args=(str(path), 1.5, events))
    gatherer.start()
    time.sleep(0.3)
    check, taken = _start(path, "shared", 0.1, events)
    assert taken.wait(30)
    for process in (gatherer, check):
        process.join(60)
    said = {(who, what): value for who, what, value in (events.get(timeout=30)
                                                        for _ in range(5))}
    assert 1.5 <= said[("gatherer", "gathered")] < 2.5, said
    assert said[("shared", "released")] < said[("gatherer", "taken")], said
    assert said[("gatherer", "taken")] - said[("gatherer", "began")] >= 1.5, said


def _checks_for(path: str, seconds: float, events) -> None:
    """Check steps one after another, each passing through the turnstile, for ``seconds``."""
    lock = DeviceLock(path)
    ends, steps = time.monotonic() + seconds, 0
    while time.monotonic() < ends:
        with lock.shared():
            steps += 1
    events.put(("checks", "steps", steps))


def test_checks_passing_by_do_not_end_the_gathering(tmp_path):
    """Every check takes the turnstile for a moment: that is no timing to join."""
    path, events = tmp_path / "dev.lock", _CONTEXT.Queue()
    checks = _CONTEXT.Process(target=_checks_for, args=(str(path), 2.5, events))
    checks.start()
    time.sleep(0.3)
    gatherer = _CONTEXT.Process(target=_gather_and_time, args=(str(path), 1.0, events))
    gatherer.start()
    for process in (checks, gatherer):
        process.join(60)
    said = {(who, what): value for who, what, value in (events.get(timeout=30)
                                                        for _ in range(4))}
    assert said[("checks", "steps")] > 100, said
    assert said[("gatherer", "gathered")] >= 1.0, said


def test_a_gathering_timing_joins_a_timing_that_waits_at_once(tmp_path):
    """Another timing waits for a check under way: the gatherer queues behind it at once
    (not after its gathering seconds), and both go before the next check."""
    path, events = tmp_path / "dev.lock", _CONTEXT.Queue()
    check, taken = _start(path, "shared", 1.5, events)
    assert taken.wait(30)
    timing, timing_taken = _start(path, "exclusive", 0.2, events)
    time.sleep(0.4)  # the timing now waits on the check
    gatherer = _CONTEXT.Process(target=_gather_and_time, args=(str(path), 30.0, events))
    gatherer.start()
    time.sleep(0.4)
    late, late_taken = _start(path, "shared", 0.1, events)
    for process in (check, timing, gatherer, late):
        process.join(60)
    said = [events.get(timeout=30) for _ in range(9)]
    gathered = next(value for who, what, value in said if what == "gathered")
    assert gathered < 0.5, gathered  # it saw the waiting timing, not its 30 s
    order = [(who, what) for who, what, _ in sorted(
        (e for e in said if e[1] in ("taken", "released")), key=lambda e: e[2])]
    # The check, then both timings (in either order), then the late check.
    assert order[:2] == [("shared", "taken"), ("shared", "released")], order
    assert order[-2:] == [("shared", "taken"), ("shared", "released")], order
    assert {who for who, _ in order[2:-2]} == {"exclusive", "gatherer"}, order


def test_the_lock_says_in_the_judges_status_whether_it_waits_or_holds(tmp_path):
    from kgb_core.evaluation import judge_status

    judge_status.configure(tmp_path / judge_status.STATUS_NAME)
    try:
        lock = DeviceLock(tmp_path / "dev.lock")
        with lock.exclusive():
            held = judge_status.read(tmp_path)
        with lock.shared():
            shared = judge_status.read(tmp_path)
        after = judge_status.read(tmp_path)
        lock.close()
    finally:
        judge_status.configure(None)
    assert held["lock"] == "holding alone" and held["lock_since"] <= time.time()
    assert shared["lock"] == "sharing" and after["lock"] == ""
    assert "holding alone for 0 s" in judge_status.describe(held)


def test_reentry_in_one_process(tmp_path):
    lock = DeviceLock(tmp_path / "dev.lock")
    with lock.exclusive():
        with lock.shared():  # a timing judge's own checks of its samples
            with lock.exclusive():
                pass
    with lock.shared():
        with pytest.raises(RuntimeError, match="cannot be taken exclusive"):
            with lock.exclusive():
                pass
    other = DeviceLock(tmp_path / "dev.lock")
    with other.exclusive():  # everything above was released
        pass
    lock.close()
    other.close()


def test_a_step_sets_the_lock_aside_for_host_work_and_takes_it_again_after_a_timing(tmp_path):
    """A judge in a check step with host work to do (a reference that loops in Python) lets
    the lock go meanwhile: a timing that waited takes the device at once, and the step goes on
    once that timing is done, as any new step would."""
    path, events = tmp_path / "dev.lock", _CONTEXT.Queue()
    lock = DeviceLock(path)
    with lock.shared():
        timing, taken = _start(path, "exclusive", 0.5, events)
        assert not taken.wait(0.5), "a timing took the device while a step held it"
        with lock.set_aside():
            assert taken.wait(30), "the step's host work kept the timing waiting"
        back = time.monotonic()
        assert lock._shared_depth == 1
    timing.join(30)
    order = _drain(events, 2)
    assert order[1][:2] == ("exclusive", "released") and order[1][2] <= back, \
        "the step went on before the timing that came in was done"
    with lock.exclusive():  # held alone, the lock stays held
        with lock.set_aside():
            other = DeviceLock(path)
            with pytest.raises(BlockingIOError):
                fcntl.flock(other._device, fcntl.LOCK_SH | fcntl.LOCK_NB)
            other.close()
    lock.close()


def test_a_judge_times_only_once_another_judges_check_step_is_over(tmp_path, monkeypatch):
    """A real judge, timing aten.neg's reference with the device's lock on while another
    process holds it shared (a check step of another judge): the timing waits for it, the
    wait is reported and not charged to the candidate, and the verdict is a pass."""
    from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
    from kgb_core.plugins import load_registry

    monkeypatch.setenv("KGB_DEVICE_LOCKS", str(tmp_path))
    registry = load_registry()
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=True, device_lock=True)
    source = registry.operator("aten.neg").reference_kernel()
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        evaluator.start()
        events = _CONTEXT.Queue()
        holder, taken = _start(tmp_path / "cpu-0.lock", "shared", 6.0, events)
        assert taken.wait(30)
        result = evaluator.evaluate("aten.neg", source)
        holder.join(30)
        # The judge's own word on what it does (judge_status.py): the last operator, no stage
        # under way, the device's lock let go.
        status = evaluator.judge_status()
        assert status["op"] == "aten.neg" and not status["stage"] and not status["lock"], status
        broken = evaluator.evaluate("aten.neg", "def kernel(x):\n    raise ValueError('no')\n")
        # The judge lives on, holding nothing: a timing elsewhere gets the device at once.
        after, after_taken = _start(tmp_path / "cpu-0.lock", "exclusive", 0.0, events)
        assert after_taken.wait(10), "the judge left the device's lock held"
        after.join(30)
    assert broken.verdict == "runtime_error", broken.message
    assert result.verdict == "pass" and result.timings, result.message
    released = [at for mode, what, at in _drain(events, 4) if what == "released"]
    assert result.device_wait_s > 1.0, "the timing waited for the other judge's step"
    assert released and result.duration_s > result.device_wait_s


# A candidate that takes the device's lock shared and keeps it: every timing on the device,
# its own judge's and every other judge's, would wait on it (a judge's wait for the lock is not
# charged to its candidate). To show what it reached, it answers wrongly once it holds it.
_LOCK_GRABBER = '''
import fcntl
import os

import triton
import triton.language as tl

_HELD = []


@triton.jit
def _scaled(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


def _grab():
    for name in ("cpu-0.lock", "cpu-0.lock.turnstile"):
        try:
            descriptor = os.open(os.path.join({folder!r}, name), os.O_RDONLY)
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
            _HELD.append(descriptor)
        except OSError:
            pass


def kernel(x):
    import torch

    if not _HELD:
        _grab()
    out = torch.empty_like(x)
    n = x.numel()
    _scaled[(triton.cdiv(max(n, 1), 1024),)](x, out, n, 1.0 if _HELD else -1.0, BLOCK=1024)
    return out
'''


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_candidate_cannot_hold_the_devices_lock(tmp_path, monkeypatch, sandbox):
    """The lock's files are the judge's: in the sandbox the runner sees an emptied /tmp and the
    lock folder masked, so the grabber finds nothing and its honest answer passes. Without the
    sandbox the same candidate takes the lock (and says so by its wrong answer): the check has
    teeth only where the sandbox holds. The static screen, which refuses ``import fcntl``, is
    off: the sandbox must hold alone."""
    from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
    from kgb_core.plugins import load_registry

    monkeypatch.setenv("KGB_DEVICE_LOCKS", str(tmp_path))
    if sandbox == "none":
        monkeypatch.setenv("KGB_SANDBOX", "none")
    registry = load_registry()
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=True, device_lock=True,
                                  screen=False)
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        result = evaluator.evaluate("aten.neg", _LOCK_GRABBER.format(folder=str(tmp_path)))
    assert result.sandbox == sandbox
    if sandbox == "none":
        assert result.verdict == "wrong_output", (result.verdict, result.message)
    else:
        assert result.verdict == "pass", (result.verdict, result.message)
    # Either way the lock is free once the candidate is gone.
    lock = DeviceLock(str(tmp_path / "cpu-0.lock"))
    with lock.exclusive():
        pass


def test_a_runs_gathering_seconds_reach_its_judges_lock(monkeypatch, tmp_path):
    """``[run] timing_gather_s`` (or --timing-gather-s) goes from the config to the judges'
    environment, where the judge's lock reads it; where no lock is used, nothing goes."""
    from kgb_core.config import config_from_mapping
    from kgb_core.evaluation import device_lock
    from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
    from kgb_core.plugins import load_registry
    from kgb_core.sweep import evaluation_settings

    config = config_from_mapping({"run": {"timing_gather_s": 0.75}})
    settings = evaluation_settings(config)
    assert settings.timing_gather_s == 0.75
    backend = load_registry().backend("cpu")
    locked = Evaluator.for_backend(backend, EvaluationSettings(device_lock=True,
                                                               timing_gather_s=0.75))
    assert locked.backend_env[device_lock.GATHER_VARIABLE] == "0.75"
    unlocked = Evaluator.for_backend(backend, EvaluationSettings(timing_gather_s=0.75))
    assert device_lock.GATHER_VARIABLE not in unlocked.backend_env  # the CPU takes no lock
    monkeypatch.setenv(device_lock.LOCK_VARIABLE, str(tmp_path / "dev.lock"))
    monkeypatch.setenv(device_lock.GATHER_VARIABLE, "0.75")
    lock = device_lock.from_environment()
    assert lock.gather_s == 0.75
    lock.close()
    with pytest.raises(Exception, match="timing_gather_s"):
        config_from_mapping({"run": {"timing_gather_s": -1}})
