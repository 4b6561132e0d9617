"""Emulation: another backend's quirks applied to a host backend (in practice, Triton's CPU
interpreter), so the cross-chip pipeline runs end to end on a machine without the chip.

``kgb run --backend cpu --emulate amd`` evaluates in the CPU interpreter with AMD's skipped
dtypes, deny-list, block and warp limits (checked at every launch) and prompt hints. It says
nothing about how a kernel behaves on an AMD GPU: every result it makes carries
``emulates="amd"`` next to ``backend="cpu"``, and every table names it ``cpu (emulating amd)``.

The emulated backend's probe is never called: its quirks are data, read from the installed
plugin, and its vendor runtime need not be present.
"""

from __future__ import annotations

import abc
from typing import Any

from kgb_core.backends import Availability, Backend, Quirks, backend_label
from kgb_core.errors import UserError

# The worker rebuilds the emulating backend from these names (it discovers plugins itself).
WORKER_EMULATES_VARIABLE = "KGB_WORKER_EMULATES"


def _smallest(*limits: int | None) -> int | None:
    known = [limit for limit in limits if limit]
    return min(known) if known else None


def _union(*groups: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for group in groups for item in group))


def emulated_quirks(host: Backend, target: Backend) -> Quirks:
    """What the host must apply to behave, as far as the harness can tell, like the target.

    - skipped dtypes and denied operators: both backends' (the target lacks them, or the host
      cannot check them), each reason naming the backend it comes from;
    - block and warp limits: the stricter of the two;
    - ``tl`` features and prompt hints: the target's first (they are what is emulated), then
      the host's (the kernel really runs there);
    - shape-case and timed tiers: the host's, since the host is what runs the cases;
    - known gaps: both (the host's first: it is what a kernel failed on).
    """
    h, t = host.quirks, target.quirks
    skipped = {dtype: f"{host.name}: {reason}" for dtype, reason in h.skipped_dtypes.items()}
    skipped.update({dtype: f"{target.name}: {reason}" for dtype, reason in t.skipped_dtypes.items()})
    denied = {op: f"{host.name}: {reason}" for op, reason in h.denied_operators.items()}
    denied.update({op: f"{target.name}: {reason}" for op, reason in t.denied_operators.items()})
    return Quirks(
        device_type=h.device_type,
        skipped_dtypes=skipped,
        max_block_size=_smallest(h.max_block_size, t.max_block_size),
        max_num_warps=_smallest(h.max_num_warps, t.max_num_warps),
        unsupported_tl=_union(t.unsupported_tl, h.unsupported_tl),
        prompt_hints=_union(t.prompt_hints, h.prompt_hints),
        case_tiers=h.case_tiers,
        timed_tiers=h.timed_tiers,
        denied_operators=denied,
        known_gaps=_union(h.known_gaps, t.known_gaps),
    )


class EmulatingBackend(Backend):
    """The host backend, running with the target's quirks; named like the host, labelled as
    emulation. Everything but the quirks is the host's."""

    def __init__(self, host: Backend, target: Backend) -> None:
        if host.emulates:
            raise UserError(f"backend {host.label} already emulates; emulate from a plain backend")
        if host.name == target.name:
            raise UserError(f"backend {host.name!r} cannot emulate itself")
        self.host, self.target = host, target
        # Every data member of Backend is the host's (a member added to Backend later too),
        # except those emulation decides itself, set below.
        for attribute in backend_data():
            setattr(self, attribute, getattr(host, attribute))
        self.emulates = target.name
        self.description = (f"{host.name} applying the quirks of {target.name}: emulation, not "
                            f"{target.name} hardware")
        self.quirks = emulated_quirks(host, target)
        self.auto_detect = self.fallback = False

    def probe(self) -> Availability:
        return self.host.safe_probe()

    def worker_environment(self) -> dict[str, str]:
        return {**self.host.worker_environment(), WORKER_EMULATES_VARIABLE: self.target.name}

    def device_name(self) -> str:
        return f"{self.host.device_name()}, emulating {self.target.name} (not {self.target.name} hardware)"

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "emulates": self.emulates,
                "label": backend_label(self.name, self.emulates)}


def backend_data() -> list[str]:
    """Backend's data members (class attributes that are not methods or properties), read off
    the class when an emulation is made: each is copied from the host."""
    return [name for name, value in vars(Backend).items()
            if not name.startswith("_") and not callable(value)
            and not isinstance(value, property)]


# What emulation decides itself; every other method of Backend is the host's, forwarded below,
# so a member added to Backend later is forwarded too instead of falling back to its default.
EMULATION_OWN = frozenset({"probe", "safe_probe", "worker_environment", "device_name"})


def _forwarded(name: str) -> Any:
    def forward(self: EmulatingBackend, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.host, name)(*args, **kwargs)

    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = f"The host backend's ``{name}``."
    return forward


for _name, _member in list(vars(Backend).items()):
    if callable(_member) and not _name.startswith("_") and _name not in EMULATION_OWN:
        setattr(EmulatingBackend, _name, _forwarded(_name))
abc.update_abstractmethods(EmulatingBackend)  # setup, synchronize, make_timer: the host's now


def emulate(registry: Any, host_name: str, target_name: str) -> EmulatingBackend:
    """The host backend with the target's quirks, both looked up by name."""
    host = registry.backend(host_name)
    try:
        target = registry.backend(target_name)
    except UserError as error:
        raise UserError(f"--emulate: {error}") from None
    return EmulatingBackend(host, target)
