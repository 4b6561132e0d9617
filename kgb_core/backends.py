"""What a chip backend is: an availability probe, device setup, dialect quirks, a timer.

A backend object is built twice: in the harness (to probe and to read its quirks) and in each
evaluation worker (to set the device up and time). So registering one must be cheap and must
not import the vendor's runtime; ``probe`` and ``setup`` do that.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from kgb_core.operators import SMALL
from kgb_core.timing import Timer, TimingSettings


@dataclass(frozen=True)
class Availability:
    available: bool
    reason: str = ""


@dataclass(frozen=True)
class Quirks:
    """A chip's Triton dialect, as data: what prompts must say and what evaluation must skip.

    ``skipped_dtypes`` maps a dtype to why its cases are skipped on this backend (they are
    recorded as skipped, never as passed). ``case_tiers`` are the shape-case tiers checked here,
    ``timed_tiers`` those timed. ``denied_operators`` maps an operator id (``aten.sort``) to why
    it is known not to run on this chip, so cross-chip views compare like with like.
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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["skipped_dtypes"] = dict(self.skipped_dtypes)
        data["denied_operators"] = dict(self.denied_operators)
        return data


class Backend(ABC):
    """One chip family behind Triton. Subclass it in a backend plugin and register an instance."""

    name: str = ""
    description: str = ""
    quirks: Quirks
    default_timing: TimingSettings = TimingSettings()
    # Whether a new OS thread alive after kernel(...) returns counts as deferred work. Python
    # threads always do; OS threads only where the runtime starts none of its own during a
    # call (true of the interpreter, whose pools exist before the first candidate runs).
    watch_os_threads: bool = False

    @abstractmethod
    def probe(self) -> Availability:
        """Is the chip usable here? Runs in the harness; may import the vendor runtime."""

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

    def worker_limits(self) -> dict[str, int]:
        """rlimits for the worker process, by ``resource`` name (e.g. ``RLIMIT_AS``)."""
        return {}

    def worker_host_memory_limit(self) -> int | None:
        """Bytes of resident host memory after which the harness kills the worker (verdict
        ``oom``): for backends that cannot use ``RLIMIT_AS`` (a GPU driver reserves huge
        address ranges), so that a candidate hoarding host memory ends before the machine's
        OOM killer picks a victim."""
        return None

    def poison_free_memory(self, nbytes: int) -> None:
        """Fill memory the allocator will hand out next with NaN, so unwritten outputs show.

        Backends whose allocator caches blocks (CUDA's does) override this; on the CPU fresh
        allocations come from the system and cannot be poisoned reliably.
        """
