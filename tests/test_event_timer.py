"""kgb_core.timing.EventTimer: one event timer for every torch device module.

No accelerator is needed: a stand-in device module with the torch Event API (record,
synchronize, elapsed_time) on the wall clock shows the policy (flush before each timed call,
events around it) on CPU tensors. The NVIDIA backend's CUDA timer is this class with torch.cuda.
"""

from __future__ import annotations

import time
import types

from kgb_core.timing import EventTimer, TimingSettings


class _WallClockEvent:
    def __init__(self, enable_timing: bool = False) -> None:
        assert enable_timing, "the timer must ask for timing events"
        self.at: float | None = None

    def record(self) -> None:
        self.at = time.perf_counter()

    def synchronize(self) -> None:
        pass

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
