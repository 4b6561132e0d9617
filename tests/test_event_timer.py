"""kgb_core.timing.EventTimer: one event timer for every torch device module.

No accelerator is needed: a stand-in device module with the torch Event API (record,
synchronize, elapsed_time) on the wall clock shows the policy (flush before each timed call,
events around it) on CPU tensors. The NVIDIA backend's CUDA timer is this class with torch.cuda.
"""

from __future__ import annotations

import dataclasses
import time
import types

from kgb_core.timing import EventTimer, TimingSettings


class _WallClockEvent:
    synchronized: list["_WallClockEvent"] = []

    def __init__(self, enable_timing: bool = False) -> None:
        assert enable_timing, "the timer must ask for timing events"
        self.at: float | None = None

    def record(self) -> None:
        self.at = time.perf_counter()

    def synchronize(self) -> None:
        _WallClockEvent.synchronized.append(self)

    def elapsed_time(self, end: "_WallClockEvent") -> float:
        return (end.at - self.at) * 1e3


FAKE_DEVICE_MODULE = types.SimpleNamespace(Event=_WallClockEvent)
SETTINGS = TimingSettings(warmup_ms=0.0, rep_ms=5.0, min_repetitions=3, max_repetitions=5)


def test_the_flush_buffer_is_cleared_before_every_timed_call():
    timer = EventTimer(SETTINGS, FAKE_DEVICE_MODULE, "cpu", flush_bytes=4096, label="fake-events")
    timer._flush_buffer.fill_(7)  # torch.empty may hand out zeros; start from a dirty buffer
    seen_clean = []

    def kernel():
        seen_clean.append(bool((timer._flush_buffer == 0).all()))
        timer._flush_buffer.fill_(7)  # dirty it; the next timed call must find it zeroed again

    timing = timer.measure(kernel)
    assert timing.label == "fake-events"
    # The very first call compiles and is untimed (no flush before it); every later one is.
    assert seen_clean[0] is False and all(seen_clean[1:])


def test_events_bracket_the_call():
    timer = EventTimer(SETTINGS, FAKE_DEVICE_MODULE, "cpu", flush_bytes=0, label="fake-events")
    assert timer._flush_buffer is None
    assert timer.time_once_ms(lambda: time.sleep(0.01)) >= 9.0


def test_repetitions_are_queued_and_synchronized_once_after_the_last():
    timer = EventTimer(SETTINGS, FAKE_DEVICE_MODULE, "cpu", flush_bytes=4096, label="fake-events")
    _WallClockEvent.synchronized.clear()
    flushed_before_call = []

    def kernel():
        flushed_before_call.append(bool((timer._flush_buffer == 0).all()))
        timer._flush_buffer.fill_(7)
        time.sleep(0.002)

    samples = timer.time_repetitions_ms(kernel, 4)
    assert len(samples) == 4 and all(sample >= 1.8 for sample in samples)
    assert flushed_before_call == [True] * 4
    # One wait for the whole batch, on the last call's end event: no host sync between calls.
    assert len(_WallClockEvent.synchronized) == 1
    assert timer.time_repetitions_ms(kernel, 0) == []


def test_measure_takes_its_median_over_the_queued_repetitions():
    settings = TimingSettings(warmup_ms=1.0, rep_ms=10.0, min_repetitions=3, max_repetitions=3)
    timer = EventTimer(settings, FAKE_DEVICE_MODULE, "cpu", flush_bytes=0, label="fake-events")
    _WallClockEvent.synchronized.clear()
    timing = timer.measure(lambda: time.sleep(0.002))
    assert timing.repetitions == 3 and timing.median_ms >= 1.8
    # The three estimate calls wait one by one; the three repetitions wait once.
    assert len(_WallClockEvent.synchronized) == 3 + 1


class _SleepingDevice:
    """The stand-in device module with a clock: ``_sleep(cycles)`` spins 1 ns a cycle."""

    Event = _WallClockEvent

    def __init__(self) -> None:
        self.log: list[tuple[str, float]] = []

    def _sleep(self, cycles: int) -> None:
        self.log.append(("sleep", cycles))
        time.sleep(cycles / 1e9)

    def synchronize(self) -> None:
        pass


def test_a_device_lead_spins_as_long_as_the_host_takes_before_each_start_event():
    device = _SleepingDevice()
    settings = TimingSettings(warmup_ms=0.0, rep_ms=5.0, min_repetitions=3, max_repetitions=3,
                              device_lead=True)
    timer = EventTimer(settings, device, "cpu", flush_bytes=0, label="fake-events")
    assert timer.label == "fake-events+host-lead"

    def kernel():  # 2 ms of host work per call: what the lead must cover
        device.log.append(("call", 0))
        time.sleep(0.002)

    device.log.clear()
    timer.time_repetitions_ms(kernel, 4)
    # three calls to measure the host, the clock calibrated once (1e6 cycles), then each timed
    # call after its lead
    assert [kind for kind, _ in device.log[:3]] == ["call"] * 3
    assert device.log[3] == ("sleep", 1_000_000)
    timed = device.log[4:]
    assert [kind for kind, _ in timed] == ["sleep", "call"] * 4
    cycles = timed[0][1]
    # 1.5 x the host's 2 ms (or more, on a loaded machine), on the clock the timer measured:
    # a loaded host oversleeps the calibration's spin too, so the nominal 1 ns a cycle is off
    lead_us = cycles / timer._cycles_per_us
    assert 1.5 * 2e3 * 0.99 <= lead_us < 1.5 * 2e3 * 10
    assert all(c == cycles for kind, c in timed if kind == "sleep")


def test_without_the_setting_or_a_device_sleep_there_is_no_lead():
    device = _SleepingDevice()
    off = EventTimer(SETTINGS, device, "cpu", flush_bytes=0, label="fake-events")
    off.time_repetitions_ms(lambda: None, 3)
    assert off.label == "fake-events" and device.log == []
    asked = TimingSettings(warmup_ms=0.0, rep_ms=5.0, min_repetitions=3, device_lead=True)
    no_sleep = EventTimer(asked, FAKE_DEVICE_MODULE, "cpu", flush_bytes=0, label="fake-events")
    assert no_sleep.label == "fake-events"
    assert len(no_sleep.time_repetitions_ms(lambda: None, 3)) == 3


class _QueuedDevice:
    """A device with a queue, on virtual clocks in microseconds: the host's moves when the
    host works (``host_work``, and while it waits in a synchronize), the device's as it runs
    its queued work, each piece once the device is free and the host has issued it. Its
    events answer ``query`` as CUDA's do: whether the device has run past them yet."""

    cycles_per_us = 1000.0  # a 1 GHz clock for _sleep

    def __init__(self) -> None:
        self.host_us = 0.0
        self.device_free_us = 0.0
        self.leads_us: list[float] = []
        device = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                self.at = 0.0

            def record(self) -> None:
                self.at = device._enqueue(0.0)

            def query(self) -> bool:
                return self.at <= device.host_us

            def synchronize(self) -> None:
                device.host_us = max(device.host_us, self.at)

            def elapsed_time(self, end: "Event") -> float:
                return (end.at - self.at) / 1e3

        self.Event = Event

    def _enqueue(self, device_us: float) -> float:
        self.device_free_us = max(self.device_free_us, self.host_us) + device_us
        return self.device_free_us

    def host_work(self, us: float) -> None:
        self.host_us += us

    def kernel(self, us: float) -> None:
        self._enqueue(us)

    def _sleep(self, cycles: int) -> None:
        self.leads_us.append(cycles / self.cycles_per_us)
        self._enqueue(cycles / self.cycles_per_us)

    def synchronize(self) -> None:
        self.host_us = max(self.host_us, self.device_free_us)


def _led_timer(device: _QueuedDevice, monkeypatch) -> EventTimer:
    """An event timer with the lead on ``device``, its host clock the device's virtual one."""
    import kgb_core.timing

    monkeypatch.setattr(kgb_core.timing, "time",
                        types.SimpleNamespace(perf_counter=lambda: device.host_us / 1e6))
    settings = TimingSettings(warmup_ms=0.0, rep_ms=5.0, min_repetitions=3, device_lead=True)
    return EventTimer(settings, device, "cpu", flush_bytes=0, label="queued")


def test_a_lead_the_host_outran_is_grown_and_its_call_not_kept(monkeypatch):
    """The lead is measured before the batch; a host that gets busier after it (the first job
    on a fresh machine, judges starting beside it) issues the call after the lead ran out,
    and the device's wait would be timed as the kernel's."""
    device = _QueuedDevice()
    timer = _led_timer(device, monkeypatch)
    issues_us = iter([100.0] * 3 + [2000.0] * 100)  # fast while the lead is measured

    def kernel():  # 2 ms of host work, then 10 us on the device
        device.host_work(next(issues_us))
        device.kernel(10.0)

    samples = timer.time_repetitions_ms(kernel, 5)
    assert len(samples) == 5
    assert all(abs(sample - 0.010) < 1e-9 for sample in samples), samples
    first_lead, *grown = device.leads_us[1:]  # [0] calibrates the clock
    assert 140 <= first_lead <= 160  # 1.5 times the 100 us measured
    assert grown and min(grown) >= 2000  # then long enough for the busier host
    assert len(grown) == 5  # one call, the outrun one, queued and not kept


def test_a_timing_counts_the_calls_that_outran_their_lead(monkeypatch):
    device = _QueuedDevice()
    timer = _led_timer(device, monkeypatch)
    timer.settings = TimingSettings(warmup_ms=0.05, rep_ms=10.0, min_repetitions=5,
                                    max_repetitions=5, device_lead=True)
    # A lead measured while the host was quicker than it is now: 150 us for 2 ms of issue.
    monkeypatch.setattr(timer, "_lead_cycles", lambda fn: int(150 * device.cycles_per_us))

    def kernel():
        device.host_work(2000.0)
        device.kernel(10.0)

    timing = timer.measure(kernel)
    assert timing.repetitions == 5 and abs(timing.median_ms - 0.010) < 1e-9
    assert timing.lead_outruns == 1
    assert timer.measure(kernel).lead_outruns == 1  # counted per measurement


def test_without_the_check_the_outrun_lead_times_the_host(monkeypatch):
    """The same device and calls with events that cannot be queried: the control that shows
    what the check above prevents."""
    device = _QueuedDevice()
    timer = _led_timer(device, monkeypatch)
    del device.Event.query
    issues_us = iter([100.0] * 3 + [2000.0] * 100)

    def kernel():
        device.host_work(next(issues_us))
        device.kernel(10.0)

    samples = timer.time_repetitions_ms(kernel, 5)
    assert min(samples) > 1.8  # the host's 2 ms, not the kernel's 10 us


def test_a_call_that_waits_for_the_device_grows_the_lead_no_further_than_its_ceiling(
        monkeypatch):
    """A call that synchronizes inside always finds its start event passed; the lead grows to
    the ceiling, then goes back to the one measured (more would only spend device time), and
    the calls are kept, every one of the count asked."""
    from kgb_core.timing import _LEAD_CEILING_US

    device = _QueuedDevice()
    timer = _led_timer(device, monkeypatch)

    def kernel():
        device.host_work(50.0)
        device.kernel(10.0)
        device.synchronize()

    samples = timer.time_repetitions_ms(kernel, 20)
    assert len(samples) == 20
    leads = device.leads_us[1:]
    assert max(leads) == _LEAD_CEILING_US
    assert len(leads) <= 20 + 8  # a few outrun calls while it grew, not one per sample
    assert leads[-20:] == [leads[0]] * 20  # every kept call after the lead first measured


def _repetitions(timer) -> int:
    """Repetitions of a 1 ms call with 4 ms of prepare before each (the runner's new input
    values): with rep_ms 20, the call alone divides the budget into 20, a whole one into 4."""
    return timer.measure(lambda: time.sleep(0.001), prepare=lambda: time.sleep(0.004)).repetitions


def test_a_whole_repetition_budget_counts_the_prepare_and_the_flush_with_the_call():
    from kgb_core.timing import WallClockTimer

    settings = TimingSettings(warmup_ms=0.5, rep_ms=20.0, min_repetitions=3,
                              max_repetitions=1000)
    whole = dataclasses.replace(settings, whole_repetition_budget=True)
    for make in (lambda s: EventTimer(s, _SleepingDevice(), "cpu", flush_bytes=4096,
                                      label="fake-events"),
                 lambda s: WallClockTimer(s, lambda: None, "wall")):
        assert _repetitions(make(settings)) >= 12
        assert _repetitions(make(whole)) <= 6


def test_a_whole_repetition_is_timed_from_before_its_prepare():
    timer = EventTimer(TimingSettings(), _SleepingDevice(), "cpu", flush_bytes=0, label="fake")
    timer._prepare = lambda: time.sleep(0.004)
    assert timer.time_whole_once_ms(lambda: time.sleep(0.001)) >= 4.5
    assert timer.time_once_ms(lambda: time.sleep(0.001)) < 4.0


def test_the_nvidia_backend_times_with_the_lead_by_default(monkeypatch):
    """The NVIDIA backend's timers, made as the judge and runner make them (``Timers``, a
    run's settings over the backend's defaults), spin the device before each timed call: the
    runner's recorded call issues for longer than a small kernel runs (benchmarks/RESULTS.md,
    twenty-second session). A stand-in device module takes torch.cuda's place here."""
    from kgb_core.plugins import load_registry
    from kgb_core.timing import Timers

    nvidia = load_registry().backend("nvidia")
    device = _SleepingDevice()
    monkeypatch.setattr(type(nvidia), "device_module", lambda self: device)
    monkeypatch.setattr(type(nvidia), "flush_bytes", 0)  # no CUDA buffer to zero here
    timers = Timers(nvidia)
    timer = timers.get({})
    assert timer.label == "cuda-events+l2-flush+host-lead"
    timer.time_repetitions_ms(lambda: time.sleep(0.001), 2)
    # The clock calibrated once, then a lead before each of the two timed calls, about 1.5
    # times the host's 1 ms (the fake clock: 1 ns a cycle, as a loaded host sleeps it).
    assert device.log[0] == ("sleep", 1_000_000)
    (kind, cycles), second = device.log[1:]
    assert kind == "sleep" and second == (kind, cycles) and cycles > 0.75e6
    # A run can still turn it off.
    assert timers.get({"device_lead": False}).label == "cuda-events+l2-flush"
