"""What a chip backend is: an availability probe, device setup, dialect quirks, a timer.

A backend object is built in the harness (to probe and to read its quirks), in each judge
process (to set the device up for the references and time the baseline) and in each runner (to
set the device up for the candidate and time it). So registering one must be cheap and must not
import the vendor's runtime; ``probe`` and ``setup`` do that.
"""

from __future__ import annotations

import copy
import os
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from kgb_core.errors import UserError
from kgb_core.operators import SMALL
from kgb_core.timing import Timer, TimingSettings


class ProbeCheck(NamedTuple):
    """One thing a probe looked at: ``("import torch_npu", False, "No module named 'torch_npu'")``.

    A plain 3-tuple works as well; ``kgb doctor`` prints each as a line.
    """

    what: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class Availability:
    """Whether a backend can run here, and why (one line). ``checks`` optionally lists what the
    probe looked at, in order, for ``kgb doctor``; a backend that gives none still works."""

    available: bool
    reason: str = ""
    checks: tuple[ProbeCheck, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "checks", tuple(ProbeCheck(*c) for c in self.checks))

    @classmethod
    def from_checks(cls, checks: Iterable[ProbeCheck | tuple], found: str = "") -> "Availability":
        """Available when every check passed; otherwise the reason names the first that failed."""
        checks = tuple(ProbeCheck(*c) for c in checks)
        failed = next((c for c in checks if not c.ok), None)
        if failed is None:
            return cls(True, found or "; ".join(c.detail for c in checks if c.detail), checks)
        return cls(False, f"{failed.what}: {failed.detail}" if failed.detail else failed.what,
                   checks)

    def to_dict(self) -> dict[str, Any]:
        return {"available": self.available, "reason": self.reason,
                "checks": [c._asdict() for c in self.checks]}


class ProbeSteps:
    """A probe's steps as it goes, for ``kgb doctor``: ``step`` records one and says whether it
    passed; ``unavailable`` and ``available`` end the probe with every step so far, so a probe
    written as a chain of early returns still reports what it looked at."""

    def __init__(self) -> None:
        self.checks: list[ProbeCheck] = []

    def step(self, what: str, ok: Any, detail: str = "") -> bool:
        self.checks.append(ProbeCheck(what, bool(ok), detail))
        return bool(ok)

    def unavailable(self, reason: str) -> Availability:
        return Availability(False, reason, tuple(self.checks))

    def available(self, reason: str) -> Availability:
        return Availability(True, reason, tuple(self.checks))


@dataclass(frozen=True)
class Quirks:
    """A chip's Triton dialect, as data: what prompts must say and what evaluation must skip.

    ``skipped_dtypes`` maps a dtype to why its cases are skipped on this backend (they are
    recorded as skipped, never as passed). ``case_tiers`` are the shape-case tiers checked here,
    ``timed_tiers`` those timed. ``denied_operators`` maps an operator id (``aten.sort``) to why
    it is known not to run on this chip, so cross-chip views compare like with like.
    ``known_gaps`` lets a failure that comes from the backend rather than the kernel say so.
    """

    device_type: str
    skipped_dtypes: Mapping[str, str] = field(default_factory=dict)
    max_block_size: int | None = None
    max_num_warps: int | None = None
    unsupported_tl: tuple[str, ...] = ()
    prompt_hints: tuple[str, ...] = ()
    case_tiers: tuple[str, ...] = (SMALL,)
    timed_tiers: tuple[str, ...] = (SMALL,)
    denied_operators: Mapping[str, str] = field(default_factory=dict)
    # (regular expression, what it means): an error message of something this backend cannot
    # run, which a correct kernel may use (kgb_core/evaluation/backend_gaps.py).
    known_gaps: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["skipped_dtypes"] = dict(self.skipped_dtypes)
        data["denied_operators"] = dict(self.denied_operators)
        return data


@dataclass(frozen=True)
class ChipProfile:
    """What a backend is, as data, apart from the code that drives its device (``Backend``):
    its name, its Triton dialect (``quirks``, the deny-list with its citations among them), its
    default timing settings, and how the core is to treat it. Frozen: the core reads it and
    never asks a backend's code to decide these. An emulation (``kgb_core.emulation``) is the
    host's runtime with a profile merged from the host's and the target's."""

    name: str
    quirks: Quirks
    description: str = ""
    default_timing: TimingSettings = TimingSettings()
    # Whether a new OS thread alive after kernel(...) returns counts as deferred work. Python
    # threads always do; OS threads only where the runtime starts none of its own during a
    # call (true of the interpreter, whose pools exist before the first candidate runs).
    watch_os_threads: bool = False
    # Whether auto-detection may pick this backend when it is available. Backends that are no
    # chip (the CPU interpreter, the example plugin) say False: they run only when named.
    auto_detect: bool = True
    # Whether this is the fallback: the backend run where auto-detection finds no chip, and the
    # host an emulation (``--emulate``) runs on unless ``--backend`` names another. It must
    # need no chip; the CPU interpreter declares it (``Registry.fallback_backend``).
    fallback: bool = False
    # Whether this backend's timings measure a chip. Triton's interpreter says False: its
    # timings are stored marked (``kgb_core.timing.stored_label``), and reports show them as no
    # performance numbers.
    timings_measure_hardware: bool = True
    # Set on an emulation's profile: the name of the backend whose quirks it applies. Every
    # result it makes carries it, so it is never read as hardware.
    emulates: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-able data (``kgb backends --json``)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["quirks"] = self.quirks.to_dict()
        data["default_timing"] = asdict(self.default_timing)
        return data


PROFILE_FIELDS = tuple(f.name for f in fields(ChipProfile))


class Backend(ABC):
    """The code that drives one chip family behind Triton: probe, device set-up, timer, streams,
    memory, the runner's environment and limits. What the backend *is* lives in its ``profile``
    (a ``ChipProfile``); its fields read here as attributes (``backend.name``,
    ``backend.quirks``). Subclass it, or ``kgb_core.torch_device.TorchDeviceBackend`` for a chip
    with a torch device module, in a backend plugin and register an instance."""

    profile: ChipProfile

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # One way to say what a backend is: a field set beside the profile would be read by
        # some code and not by the rest.
        beside = sorted(set(vars(cls)) & set(PROFILE_FIELDS))
        if beside:
            raise TypeError(f"{cls.__name__} sets {', '.join(beside)} as class attributes: a "
                            f"backend declares them in its profile, "
                            f"profile = ChipProfile({beside[0]}=..., ...)")

    def with_profile(self, profile: ChipProfile) -> "Backend":
        """This backend's code with another profile (an emulation's): a shallow copy."""
        other = copy.copy(self)
        other.profile = profile
        return other

    @abstractmethod
    def probe(self) -> Availability:
        """Is the chip usable here? Runs in the harness; may import the vendor runtime."""

    def safe_probe(self) -> Availability:
        """``probe()``, with a probe that raises reported as a reason, not a traceback."""
        try:
            availability = self.probe()
        except Exception as error:  # a buggy third-party probe must not take the tool down
            return Availability(False, f"the probe of backend {self.name!r} raised "
                                       f"{type(error).__name__}: {error}",
                                (ProbeCheck("probe()", False, f"{type(error).__name__}: {error}"),))
        if not isinstance(availability, Availability):
            return Availability(False, f"the probe of backend {self.name!r} returned "
                                       f"{type(availability).__name__}, not an Availability")
        return availability

    @property
    def label(self) -> str:
        """How results name this backend: ``cpu``, or ``cpu (emulating amd)``."""
        return backend_label(self.name, self.emulates)

    def worker_environment(self) -> dict[str, str]:
        """Variables the worker needs before it imports torch or triton (e.g. TRITON_INTERPRET)."""
        return {}

    @abstractmethod
    def setup(self) -> str:
        """Prepare the device inside the worker and return its torch device string."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait for all work queued on the device."""

    @abstractmethod
    def make_timer(self, settings: TimingSettings) -> Timer:
        """The timer the worker uses for candidate and reference alike."""

    def device_name(self) -> str:
        """A human name for the device, recorded with every run."""
        return self.name

    def current_stream(self) -> object | None:
        """A handle of the stream work is queued on now; None where the device has no streams.

        The worker takes it once as the harness's stream; a Triton launch on any other stream
        hides from the timer and is refused.
        """
        return None

    def device_state_watch(self) -> Callable[[], list[str]] | None:
        """A probe of device state the timer's conditions depend on and a candidate could change
        (on NVIDIA: L2 set aside for persisting accesses, which the timer's flush cannot
        evict), taken in the runner after ``setup()``, before any candidate is imported. It
        returns what changed since, [] when nothing did; the runner calls it at every Triton
        launch and after every call, and a change is ``tampering``. None: nothing to watch."""
        return None

    def device_count(self) -> int:
        """How many devices of this backend the harness sees (what ``--devices all`` means).

        Runs in the harness; GPU backends count devices without creating a context."""
        return 1

    def device_environment(self, index: int) -> dict[str, str] | None:
        """Variables that pin a worker process to device ``index`` before it imports anything.

        The worker then sees that one device as device 0, which is what ``setup()`` selects.
        None (the default) says the backend does not know how to pin a worker, and a sweep on
        several devices is refused for it rather than run with every worker on one device.
        """
        return None

    def ray_resources(self) -> dict[str, Any]:
        """Ray actor options that reserve one of this backend's devices (``--executor ray``).

        The default asks for one GPU, which Ray's scheduler accounts for and, for NVIDIA (and
        AMD) GPUs, exposes to the actor through the visible-devices variable it sets itself.
        """
        return {"num_gpus": 1}

    def worker_limits(self) -> dict[str, int]:
        """rlimits for the worker process, by ``resource`` name (e.g. ``RLIMIT_AS``)."""
        return {}

    def worker_host_memory_limit(self) -> int | None:
        """Bytes of resident host memory after which the harness kills the worker (verdict
        ``oom``): for backends that cannot use ``RLIMIT_AS`` (a GPU driver reserves huge
        address ranges), so that a candidate hoarding host memory ends before the machine's
        OOM killer picks a victim."""
        return None

    def sandbox_device_files(self) -> tuple[str, ...]:
        """Glob patterns of the device files a runner needs bound into its sandbox
        (``/dev/nvidia*``); none for a backend that computes on the host."""
        return ()

    def warm_runner_cache(self) -> None:
        """Compile, once in the judge, what every runner would otherwise compile again (Triton's
        driver utilities, a C module). The judge runs this with ``TRITON_CACHE_DIR`` set to a
        seed folder and copies that folder into each new runner's own Triton cache. Nothing
        here may run in the runner template: touching the device there (even counting devices)
        makes every forked runner unable to initialise it."""

    def install_runtime_shims(self) -> tuple[str, ...]:
        """Shims the backend's Triton runtime needs to run correct kernels as the chip would,
        installed in the runner template before any candidate is imported (the CPU backend:
        gaps of Triton's interpreter, kgb_backends/interpreter_shims.py); the names of those
        installed."""
        return ()

    def warm_template(self) -> None:
        """Work every runner would otherwise repeat on its first launch, done once in the runner
        template before it forks any (on NVIDIA: Triton's compiler, initialised by compiling a
        tiny kernel for the GPU's architecture, 0.5 s a runner on the H200). It must not touch
        the device (a CUDA context does not survive ``fork``) and must leave the process
        single-threaded; the template checks the second and fails loudly if it is not."""

    def release_cached_memory(self) -> None:
        """Give the device memory the judge's allocator keeps cached back to the device, after
        each candidate. Several judges share a GPU in a correctness pass (``--workers-per-device``)
        and each one's cache of its largest case's tensors would otherwise stay reserved: on an
        80 GB H100, six judges left the runners no memory. A backend without a caching
        allocator has nothing to do."""

    def device_memory_peak(self, reset: bool = False) -> int | None:
        """Bytes of device memory this process's allocator held at most (cached blocks
        included) since the last reset, then, with ``reset``, a new count from now; None where
        the backend keeps no such count (the CPU's memory is the host's). A judge records its
        own and its runner's with every result: how much a job needs is what decides how many
        jobs a device can check at once (on an H100, six at once ran out at a sweep's start)."""
        return None

    def device_memory_total(self) -> int | None:
        """Bytes of memory the device has, or None where the backend does not say (the CPU's
        memory is the host's). A pool whose jobs share a device admits them by their bytes
        against it (``evaluation/job_memory.py``); without it, by their count alone."""
        return None

    def poison_free_memory(self, nbytes: int) -> None:
        """Fill memory the allocator will hand out next with NaN, so unwritten outputs show.

        Backends whose allocator caches blocks (CUDA's does) override this; on the CPU fresh
        allocations come from the system and cannot be poisoned reliably.
        """


def _profile_field(name: str) -> property:
    return property(lambda self: getattr(self.profile, name),
                    doc=f"The profile's ``{name}`` (``ChipProfile``).")


for _field in PROFILE_FIELDS:
    setattr(Backend, _field, _profile_field(_field))


def backend_label(backend: str, emulates: str | None = "") -> str:
    """The one way a backend is named in results and reports; emulation is always spelled out."""
    return f"{backend} (emulating {emulates})" if emulates else backend


def visible_device(index: int, variable: str) -> str:
    """What to set ``variable`` (``CUDA_VISIBLE_DEVICES``...) to so that a worker sees only the
    harness's device ``index``: the index itself, or, where the harness's own environment
    already narrows the devices (``CUDA_VISIBLE_DEVICES=2,3``), the ``index``-th entry of it,
    since device indices inside the harness count only the visible ones."""
    already = [entry.strip() for entry in os.environ.get(variable, "").split(",")
               if entry.strip()]
    if variable in os.environ and already:
        if index >= len(already):
            raise UserError(f"device {index} is not visible: {variable}={os.environ[variable]} "
                            f"shows {len(already)} device(s)")
        return already[index]
    return str(index)
