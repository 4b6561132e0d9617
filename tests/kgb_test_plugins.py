"""Plugins the test suite hands to evaluation workers through KGB_EXTRA_PLUGINS."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kgb_backends.cpu import CpuInterpreterBackend
from kgb_core import hookimpl
from kgb_core.backends import Availability, Backend, ChipProfile, Quirks
from kgb_core.candidates import Candidate
from kgb_core.methods import Method

KERNELS = Path(__file__).parent / "kernels"


class NoFloatsBackend(CpuInterpreterBackend):
    """A CPU backend whose quirks rule out every float dtype, so no case can run."""

    profile = replace(CpuInterpreterBackend.profile, name="cpu_nofloats", quirks=Quirks(
        device_type="cpu", skipped_dtypes={
            d: "test: ruled out" for d in ("float32", "float16", "bfloat16")}))


class ThreadCountWatchBackend(CpuInterpreterBackend):
    """A CPU backend that treats torch's intra-op thread count as device state the timer
    depends on: the runner's device-state watch, shown without the GPU whose L2 it watches."""

    profile = replace(CpuInterpreterBackend.profile, name="cpu_statewatch")

    def device_state_watch(self):
        import torch

        threads = torch.get_num_threads()

        def changes():
            now = torch.get_num_threads()
            return [f"torch's thread count from {threads} to {now}"] if now != threads else []

        return changes


class ThreadedWarmupBackend(CpuInterpreterBackend):
    """A CPU backend whose template warm-up leaves a thread running: the template must refuse
    to fork runners from it."""

    profile = replace(CpuInterpreterBackend.profile, name="cpu_threadedwarmup")

    def warm_template(self):
        import threading

        threading.Thread(target=threading.Event().wait, daemon=True).start()


class PeakCountBackend(CpuInterpreterBackend):
    """A CPU backend that counts a process's peak resident memory as its device memory peak
    (``Backend.device_memory_peak``; the CPU's own keeps no count): the judge's and the
    runner's counts reach the result, shown without a GPU."""

    profile = replace(CpuInterpreterBackend.profile, name="cpu_peakcount")

    def device_memory_peak(self, reset=False):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def device_memory_total(self):
        """A size to admit shared jobs against (``devices._DeviceGate.capacity``)."""
        return 64 << 30


class FakeChipBackend(Backend):
    """A chip that is never here: only its quirks exist, which is all emulation needs."""

    profile = ChipProfile(
        name="fakechip", description="test: quirks of a chip this machine does not have",
        quirks=Quirks(device_type="fake", skipped_dtypes={"float16": "test: no fp16 on fakechip"},
                      max_num_warps=4, prompt_hints=("fakechip hint: use num_warps <= 4",),
                      denied_operators={"aten.sort": "test: no sort on fakechip"}))

    def probe(self):
        return Availability(False, "needs the fakechip runtime (a test backend)")

    def setup(self):
        raise AssertionError("emulation must never set up the emulated chip")

    def synchronize(self):
        raise AssertionError("emulation must never touch the emulated chip")

    def make_timer(self, settings):
        raise AssertionError("emulation must never time with the emulated chip's timer")


@hookimpl
def kgb_register_backends(register):
    register(NoFloatsBackend())
    register(ThreadCountWatchBackend())
    register(ThreadedWarmupBackend())
    register(PeakCountBackend())
    register(FakeChipBackend())


class CorpusMethod(Method):
    """Hands out files from tests/kernels: option ``files`` maps an op id to a file name."""

    name = "corpus"
    description = "test corpus of deliberately bad kernels"

    def option_keys(self) -> frozenset[str]:
        return frozenset({"files"})

    def generate(self, op, quirks, ctx):
        filename = ctx.options["files"].get(op.id)
        if filename is None:
            return []
        return [Candidate(source=(KERNELS / filename).read_text(), origin=filename)]


@hookimpl
def kgb_register_methods(register):
    register(CorpusMethod())
