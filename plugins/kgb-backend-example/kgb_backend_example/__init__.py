"""kgb-backend-example: the smallest complete backend plugin, to copy when adding a chip.

It is Triton's CPU interpreter under another name, with quirks made up to exercise every
field: it is no chip, its timings are interpreter wall-clock, and its results say nothing
about any hardware. A real backend replaces four things (marked VENDOR below): the probe, the
device setup, the timer and the quirks, each from the vendor's documentation.
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.api import (SMALL, Availability, Backend, ChipProfile, ProbeCheck, Quirks, Timer,
                          TimingSettings, WallClockTimer)

__version__ = "0.1.0"


class ExampleBackend(Backend):
    profile = ChipProfile(
        name="example",
        description=("example plugin: Triton's CPU interpreter with made-up quirks "
                       "(an example to copy, not a chip; timings are not performance)"),
        # VENDOR: quirks are data. Each entry says why, and where the fact comes from.
        quirks=Quirks(
            device_type="cpu",
            skipped_dtypes={"float16": "example quirk (made up): pretends the chip has no fp16"},
            max_num_warps=8,
            max_block_size=4096,
            unsupported_tl=("tl.sort (made up for the example)",),
            prompt_hints=("This is the kgb example backend: Triton's CPU interpreter. Keep blocks "
                          "at or below 4096 elements per dimension and num_warps at or below 8.",),
            case_tiers=(SMALL,),
            timed_tiers=(SMALL,),
            denied_operators={
                "aten.sort": "example quirk (made up): pretends tl.sort does not lower here",
                "aten.topk": "example quirk (made up): builds on the same missing sort",
            },
        ),
        # The interpreter runs each launch to completion and starts no threads during a call.
        watch_os_threads=True,
        # An example is never picked by auto-detection; a real chip's backend leaves this True.
        auto_detect=False,
        timings_measure_hardware=False,  # Triton's interpreter, as the CPU backend
        default_timing=TimingSettings(warmup_ms=0.0, rep_ms=20.0, min_repetitions=2,
                                        max_repetitions=5),
    )

    def probe(self) -> Availability:
        # VENDOR: import the runtime lazily, here, and ask it for a device, e.g.
        # ``import torch_npu; torch.npu.is_available()``. Each step is one ProbeCheck, so
        # `kgb doctor` shows exactly which one is missing.
        checks = []
        try:
            import triton
            from triton.runtime.interpreter import InterpretedFunction  # noqa: F401
        except ImportError as error:
            return Availability.from_checks([ProbeCheck("import triton's interpreter", False,
                                                        str(error))])
        checks.append(ProbeCheck("import triton's interpreter", True, triton.__version__))
        return Availability.from_checks(checks, found="the CPU interpreter (an example, no chip)")

    def worker_environment(self) -> dict[str, str]:
        # VENDOR: variables the worker needs before importing torch (a visible-devices mask).
        return {"TRITON_INTERPRET": "1"}

    def setup(self) -> str:
        # VENDOR: ``import torch_npu; torch.npu.set_device(0); return "npu:0"``.
        return "cpu"

    def synchronize(self) -> None:
        # VENDOR: ``torch.npu.synchronize()``. The interpreter finishes each launch in place.
        pass

    def make_timer(self, settings: TimingSettings) -> Timer:
        # VENDOR: subclass kgb_core.timing.Timer with the vendor's events (torch.npu.Event,
        # torch.musa.Event ...) and flush the cache before each timed call where the chip has one.
        return WallClockTimer(settings, self.synchronize, label="interpreter-wallclock (example)")


@hookimpl
def kgb_register_backends(register):
    register(ExampleBackend())
