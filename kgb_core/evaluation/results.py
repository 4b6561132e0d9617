"""The result of evaluating one candidate, as stored and as printed by ``kgb eval --json``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kgb_core.evaluation import verdicts


@dataclass
class EvalResult:
    op: str
    backend: str
    verdict: str
    # The backend whose quirks were applied, when this was emulation (``kgb_core.emulation``):
    # then ``backend`` ran it and no hardware of ``emulates`` was involved.
    emulates: str = ""
    message: str = ""
    method: str = ""
    sample: int = 0
    failing_case: dict[str, Any] | None = None
    cases: list[dict[str, Any]] = field(default_factory=list)
    timings: list[dict[str, Any]] = field(default_factory=list)
    timing_label: str = ""
    candidate_ms: float | None = None
    reference_ms: float | None = None
    speedup: float | None = None
    duration_s: float = 0.0
    log_tail: str = ""
    # The device slot (or Ray node and slot) whose worker evaluated it; "" for a plain run.
    evaluated_on: str = ""
    # The OS sandbox the candidate's runner ran in: "bwrap", or "none" (unsandboxed: a
    # cheating candidate could have reached the harness). "" for results made before runners,
    # and for verdicts given before any runner started (the static screen, the deny-list).
    sandbox: str = ""
    # What the backend cannot run, when the failure matches one of its known gaps
    # (kgb_core/evaluation/backend_gaps.py): the kernel may be right on another backend.
    backend_gap: str = ""
    # The (case, dtype) each probe drew ("rewritten inputs", "ghost replay"; "case/dtype"): a
    # failure there can be reproduced on that draw (EvaluationSettings.probe_draw).
    probes: dict[str, str] = field(default_factory=dict)
    # Seconds the judge waited for its device's lock (device_lock.py): other judges' timings,
    # or their checks while this one waited to time. Not part of duration_s's meaning.
    device_wait_s: float = 0.0
    # Of device_wait_s, the seconds spent waiting to hold the device alone (to time); of
    # those, the seconds spent gathering other timings first (DeviceLock.gather_s).
    device_wait_alone_s: float = 0.0
    device_gathered_s: float = 0.0
    # Seconds the judge held the device alone (its timings), when every other judge's checks
    # on the device waited; and each stage's seconds: where an evaluation's time went.
    device_alone_s: float = 0.0
    stage_s: dict[str, float] = field(default_factory=dict)
    # Per stage, the steps its judge held the device shared (checking beside other judges):
    # [count, seconds in all, the longest]. A judge about to time waits for the steps under way
    # to end (a diagnostic of those waits: no verdict reads it).
    shared_steps: dict[str, list[float]] = field(default_factory=dict)
    # Per stage, where its shared steps' seconds went (drawing inputs, the request's round
    # trip, the runner's own split of it, the reference and comparison...): what a shorter
    # step would have to win back (a diagnostic: no verdict reads it).
    step_parts: dict[str, dict[str, float]] = field(default_factory=dict)
    # Seconds the judge spent drawing inputs ahead of the steps that use them, holding no lock
    # (``Evaluation._draw_ahead``): host work taken out of the steps.
    drawn_ahead_s: float = 0.0
    # Of drawn_ahead_s, the seconds on the job's own thread: waiting for a draw its plan's
    # thread was still making (``draw_ahead.DrawPlan``), or making one the plan did not hold.
    # What drawing ahead did not hide.
    draw_ahead_waited_s: float = 0.0
    # Bytes of device memory held at most during the evaluation (Backend.device_memory_peak):
    # the judge's, and the runner's as the runner reported it (a count for scheduling, never
    # evidence). None where the backend keeps no count or the runner never answered its exit.
    device_peak_judge_bytes: int | None = None
    device_peak_runner_bytes: int | None = None
    # The judge's peak within each stage (its count reset at every stage's end; the runner's
    # start counts in the first): where a job's memory goes, for what would lower it (a
    # diagnostic: the gate reads the whole job's peak).
    judge_peak_by_stage: dict[str, int] = field(default_factory=dict)
    # Where a job that ran out of memory beside other checks ran again with the device to itself
    # (devices.DevicePool): the first try's verdict and message. Empty when it ran once.
    retried_alone: str = ""
    # Seconds the job waited at its device's gate for memory (devices._DeviceGate, jobs
    # admitted by their bytes) before its judge had it: not part of duration_s either.
    memory_wait_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.verdict == verdicts.PASS

    @property
    def backend_label(self) -> str:
        from kgb_core.backends import backend_label

        return backend_label(self.backend, self.emulates)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EvalResult":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


def ran_out_of_device_memory(result: EvalResult) -> bool:
    """An out-of-memory verdict, or another failure the allocator's message explains: a
    harness error (inputs, reference), a runner that could not set its device up for want of
    memory (``crashed``), a candidate's call that ran out (``runtime_error``). A pool whose
    jobs share a device runs each such job again with the device to itself, once, and it keeps
    the verdict it gets then (``devices.DevicePool``): a kernel that runs out of memory alone
    still fails, one that failed only because others shared the GPU passes."""
    return (result.verdict == verdicts.OOM
            or (result.verdict in (verdicts.HARNESS_ERROR, verdicts.CRASHED,
                                   verdicts.RUNTIME_ERROR)
                and "out of memory" in result.message.lower()))
