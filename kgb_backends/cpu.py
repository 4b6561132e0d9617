"""The CPU backend: Triton's interpreter (``TRITON_INTERPRET=1``) on CPU tensors.

It runs real kernels everywhere, which makes it the default on a laptop and in CI, but its
timings measure numpy-driven interpretation, not a chip: they are labelled
``interpreter-wallclock`` and a report must never read them as performance.

Where the interpreter runs a correct kernel differently from the compiler, a shim installed in
the runner template makes it do what the compiler does (kgb_backends/interpreter_shims.py):
so far ``and``/``or`` between block tensors (a mask written ``rows < M and cols < N``), which
the bare interpreter reduced to one side, storing out of bounds, and Python float and dtype
arguments, passed as fp32 scalars and constexprs as the compiler passes them, the math of
``triton.language.extra.libdevice`` (and ``extra.cuda.libdevice``), stubs in the interpreter,
and loads and stores checked against the launch's tensors (an access past one is a
``runtime_error`` naming the kernel's line, not the runner's heap corrupted), and bf16
arithmetic, which the interpreter did on bit patterns and the shim does through fp32 (bf16
cases run here), module-level aliases of ``tl``'s builtins, and atomics, bounds-checked as
loads and stores are. What the
interpreter does with and without the shims: docs/cpu-interpreter.md.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path

from kgb_core import hookimpl
from kgb_core.backends import Availability, Backend, ChipProfile, ProbeCheck, Quirks
from kgb_core.operators import SMALL
from kgb_core.timing import Timer, TimingSettings, WallClockTimer


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:  # importable, but not from a distribution
        return "version unknown"


class CpuInterpreterBackend(Backend):
    profile = ChipProfile(
        name="cpu",
        description=("Triton's interpreter on CPU tensors (correctness anywhere; timings are not "
                     "performance)"),
        quirks=Quirks(
            device_type="cpu",
            # bf16 runs: the interpreter's bf16 arithmetic is done through fp32 by a shim
            # (kgb_backends/interpreter_bf16.py); docs/cpu-interpreter.md says what else differs.
            unsupported_tl=("tl.math.tanh (absent in Triton 3.9's interpreter)",),
            prompt_hints=(
                "Kernels run in Triton's interpreter (TRITON_INTERPRET=1) on CPU tensors: "
                "keep block sizes modest (<= 1024 elements per program) since each program is "
                "simulated with numpy.",
                "tl.math.tanh is missing in the interpreter: use libdevice.tanh "
                "(triton.language.extra.libdevice), or write tanh from tl.exp or tl.sigmoid.",
            ),
            case_tiers=(SMALL,),
            timed_tiers=(SMALL,),
            known_gaps=(
                (r"inline_asm not supported in interpreter mode",
                 "inline assembly (tl.inline_asm_elementwise) cannot run in Triton's interpreter"),
                (r"extern_elementwise not supported in interpreter mode",
                 "tl.extern_elementwise cannot run in Triton's interpreter (the libdevice functions "
                 "kgb's shim implements can: docs/cpu-interpreter.md)"),
                (r"module 'triton\.language\.math' has no attribute 'tanh'",
                 "tl.math.tanh does not exist in this Triton's interpreter; libdevice.tanh "
                 "(triton.language.extra.libdevice) runs here"),
            ),
        ),
        watch_os_threads=True,
        auto_detect=False,  # never auto-picked over a chip (see sweep.resolve_backend)
        fallback=True,  # run where no chip is found, and the default host of an emulation
        timings_measure_hardware=False,  # the interpreter's seconds are no performance numbers
        # The interpreter is slow and its numbers only describe the interpreter: a few repetitions.
        default_timing=TimingSettings(warmup_ms=0.0, rep_ms=20.0, min_repetitions=2,
                                        max_repetitions=5),
    )

    def probe(self) -> Availability:
        """torch and triton installed, and a triton that ships the interpreter: found, not
        imported. The harness never runs a kernel on this backend itself (its judge process
        imports both, and says so clearly where one is broken), and importing torch here cost
        every ``kgb run``/``eval``/``serve`` about 1.4 s before its judge even started."""
        checks = []
        found = None
        for module in ("torch", "triton"):
            found = importlib.util.find_spec(module)
            if found is None:
                checks.append(ProbeCheck(f"installed {module}", False,
                                         f"No module named '{module}'"))
                return Availability(False, f"needs torch and triton installed: no {module}",
                                    tuple(checks))
            checks.append(ProbeCheck(f"installed {module}", True, _version(module)))
        # ``found`` is triton's: the interpreter is a file of its package.
        interpreter = [Path(folder) / "runtime" / "interpreter.py"
                       for folder in found.submodule_search_locations or ()]
        if not any(path.is_file() for path in interpreter):
            checks.append(ProbeCheck("triton.runtime.interpreter", False, "not in this triton"))
            return Availability(False, "this triton has no interpreter", tuple(checks))
        checks.append(ProbeCheck("triton.runtime.interpreter", True, "TRITON_INTERPRET=1"))
        return Availability(True, "Triton's interpreter is always available", tuple(checks))

    def worker_environment(self) -> dict[str, str]:
        # MALLOC_PERTURB_: glibc fills every allocation, large (mmap'd) ones included, with the
        # byte 0xFE (1 ^ 0xFF): huge values in every float and int dtype, NaN in fp16/bf16.
        # Fresh pages from the OS are zeros otherwise, so an output a kernel never writes could
        # pass for an operator whose right answer is zeros (zeros, zero_, tril of a triangle).
        return {"TRITON_INTERPRET": "1", "MALLOC_PERTURB_": "1"}

    def install_runtime_shims(self) -> tuple[str, ...]:
        from kgb_backends.interpreter_shims import install

        return install()

    def setup(self) -> str:
        return "cpu"

    def synchronize(self) -> None:
        """The interpreter runs each launch to completion before it returns."""

    def make_timer(self, settings: TimingSettings) -> Timer:
        return WallClockTimer(settings, self.synchronize, label="interpreter-wallclock")

    def worker_limits(self) -> dict[str, int]:
        # Address space: enough for torch, numpy and the interpreter's copies of small cases,
        # small enough that a runaway allocation ends in MemoryError (verdict oom), not in the
        # machine's OOM killer. KGB_CPU_WORKER_MEMORY_GB overrides it.
        gigabytes = float(os.environ.get("KGB_CPU_WORKER_MEMORY_GB", "12"))
        return {"RLIMIT_AS": int(gigabytes * (1 << 30))}

    def poison_free_memory(self, nbytes: int) -> None:
        """Best effort: NaN-fill a block malloc is likely to hand out next.

        glibc reuses freed small blocks, so an output the candidate never writes may show the
        NaN; large blocks come fresh from the OS (zeros) and cannot be poisoned this way.
        """
        import torch

        if 0 < nbytes < (64 << 20):
            block = torch.empty(nbytes // 4 + 1, dtype=torch.float32)
            block.fill_(float("nan"))
            del block

    # On the CPU a "device" is a worker slot: ``--devices 0,1`` runs two interpreter workers
    # side by side, one candidate each at a time. Nothing is pinned (the interpreter's
    # timings measure no chip, so two timed candidates on two cores compare nothing anyway).
    def device_count(self) -> int:
        return os.cpu_count() or 1

    def device_environment(self, index: int) -> dict[str, str] | None:
        return {}

    def ray_resources(self) -> dict[str, object]:
        return {"num_cpus": 1}

    def device_name(self) -> str:
        import platform

        return f"CPU ({platform.processor() or platform.machine()}), Triton interpreter"


@hookimpl
def kgb_register_backends(register):
    register(CpuInterpreterBackend())
