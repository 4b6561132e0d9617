"""Emulation: another backend's quirks applied to a host backend (in practice, Triton's CPU
interpreter), so the cross-chip pipeline runs end to end on a machine without the chip.

``kgb run --backend cpu --emulate amd`` evaluates in the CPU interpreter with AMD's skipped
dtypes, deny-list, block and warp limits (checked at every launch) and prompt hints. It says
nothing about how a kernel behaves on an AMD GPU: every result it makes carries
``emulates="amd"`` next to ``backend="cpu"``, and every table names it ``cpu (emulating amd)``.

An emulation is the host's runtime with a merged profile (``emulated_profile``): the target's
profile is data, read from the installed plugin; its probe is never called and its vendor
runtime need not be present.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kgb_core.backends import Backend, ChipProfile, Quirks
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


def emulated_profile(host: Backend, target: Backend) -> ChipProfile:
    """The profile of ``host`` running with ``target``'s quirks: named like the host, labelled
    as emulation, never auto-detected, never the fallback; everything else the host's."""
    return replace(host.profile, quirks=emulated_quirks(host, target), emulates=target.name,
                   description=(f"{host.name} applying the quirks of {target.name}: emulation, "
                                f"not {target.name} hardware"),
                   auto_detect=False, fallback=False)


def emulating(host: Backend, target: Backend) -> Backend:
    """The host's runtime (its own code, a shallow copy of it) with the emulated profile:
    nothing forwarded, so whatever the host does, the emulation does."""
    if host.emulates:
        raise UserError(f"backend {host.label} already emulates; emulate from a plain backend")
    if host.name == target.name:
        raise UserError(f"backend {host.name!r} cannot emulate itself")
    return host.with_profile(emulated_profile(host, target))


def emulation_environment(backend: Backend) -> dict[str, str]:
    """What a judge needs to rebuild ``backend``'s emulation (it discovers plugins itself)."""
    return {WORKER_EMULATES_VARIABLE: backend.emulates} if backend.emulates else {}


def device_name(backend: Backend) -> str:
    """The backend's device, and the chip it emulates, if any, spelled out as no hardware."""
    name = backend.device_name()
    if backend.emulates:
        return f"{name}, emulating {backend.emulates} (not {backend.emulates} hardware)"
    return name


def emulate(registry: Any, host_name: str, target_name: str) -> Backend:
    """The host backend with the target's quirks, both looked up by name."""
    host = registry.backend(host_name)
    try:
        target = registry.backend(target_name)
    except UserError as error:
        raise UserError(f"--emulate: {error}") from None
    return emulating(host, target)
