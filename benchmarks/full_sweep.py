"""The whole timed reference sweep of every operator, in one process, and what it cost.

``python benchmarks/full_sweep.py --backend nvidia --workers-per-device 8 --db sweep.db``

runs ``run_sweep`` (what ``kgb run`` runs) over every operator of every installed source with
the reference method, timing on and every check on, and prints per source the operators,
passes and geometric-mean speedup; where the time went (evaluation seconds per operator, the
seconds judges waited for the device's lock); the baselines (measured now, reused from an
earlier sweep, re-timed to watch drift, with the spread); the GPU's busy % sampled from
``nvidia-smi`` where there is one; and, as its last line,
``operators N, wall S s, operators/min R``.

``--same-as OTHER.db`` takes the operators another store's latest run evaluated.
``--compare OTHER.db`` sets the run against another store's latest run (the same sweep again,
or a one-worker sweep): verdicts that differ, the geometric-mean speedup ratio over operators
both passed, and the spread of per-operator speedup ratios. ``--deadline-s`` stops handing out
operators after that many seconds (what finished is reported; ``--resume`` in ``kgb run``
finishes it), so a sweep fits a device call. ``--limit N`` takes N operators spread over the
sources.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from kgb_core.config import RunConfig
from kgb_core.evaluation import judge_status
from kgb_core.plugins import load_registry
from kgb_core.progress import Progress
from kgb_core.report import baseline_note, render_table, row_detail
from kgb_core.stats import geometric_mean
from kgb_core.store import ResultStore
from kgb_core.sweep import make_pool, plan_sweep, run_sweep
from sweep_throughput import spread  # this folder: a script's own folder is on its path


class _Periodic:
    """A daemon thread that calls ``tick`` every ``interval_s`` while the ``with`` lasts
    (where ``active``)."""

    def __init__(self, interval_s: float, active: bool = True) -> None:
        self._interval, self._active = interval_s, active
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Any:
        if self._active:
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._active:
            self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.tick()

    def tick(self) -> None:
        raise NotImplementedError


class BusySampler(_Periodic):
    """The GPU's utilization every half second from ``nvidia-smi`` (none where it is absent),
    and the host's: the share of all its cores' time busy between two samples, from
    ``/proc/stat``. Judges and runners draw, compile and pack on the host; a sweep whose
    host is near 100 % gains nothing from more workers per device."""

    def __init__(self, interval_s: float = 0.5) -> None:
        self.samples: list[float] = []
        self.host_samples: list[float] = []
        self._tool = shutil.which("nvidia-smi")
        self._host_before = host_cpu_times()
        super().__init__(interval_s, active=True)

    def tick(self) -> None:
        now = host_cpu_times()
        if now is not None and self._host_before is not None:
            busy, total = (now[0] - self._host_before[0], now[1] - self._host_before[1])
            if total > 0:
                self.host_samples.append(100.0 * busy / total)
        self._host_before = now
        if self._tool is None:
            return
        try:
            out = subprocess.run([self._tool, "--query-gpu=utilization.gpu",
                                  "--format=csv,noheader,nounits", "-i", "0"],
                                 capture_output=True, text=True, timeout=5).stdout
            self.samples.append(float(out.strip().splitlines()[0]))
        except (OSError, ValueError, IndexError, subprocess.SubprocessError):
            pass

    def summary(self) -> str:
        if not self.samples:
            return "no nvidia-smi here" if not self._tool else "no samples"
        return (f"{sum(self.samples) / len(self.samples):.1f} % mean over "
                f"{len(self.samples)} samples ({sum(s > 0 for s in self.samples)} above 0)")

    def host_summary(self) -> str:
        if not self.host_samples:
            return "no /proc/stat here"
        samples = self.host_samples
        return (f"{statistics.mean(samples):.1f} % mean of {os.cpu_count()} cores over "
                f"{len(samples)} samples, median {statistics.median(samples):.1f} %, "
                f"{sum(s >= 90 for s in samples) / len(samples):.0%} of samples at 90 % or more")


def host_cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all the host's cores since boot; None off Linux. Busy is all
    but idle and iowait."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    total = sum(fields[:8])  # guest time is already counted in user
    return total - idle, total


class StallWatch(_Periodic):
    """Says what the workers are running whenever no operator has finished for ``after_s``:
    a sweep cut in the middle of a stall (the H100 at f5feb60: nothing finished for over 140 s
    after 24 operators) then shows which jobs held it."""

    def __init__(self, pool: Any, after_s: float = 60.0, every_s: float = 10.0) -> None:
        super().__init__(every_s)
        self.pool, self.after_s = pool, after_s
        self._jobs, self._since, self._said = -1, time.monotonic(), 0.0
        self._stacks_shown = False

    def tick(self) -> None:
        usage = self.pool.usage()
        done = sum(u.jobs for u in usage)
        now = time.monotonic()
        if done != self._jobs:
            self._jobs, self._since, self._said = done, now, 0.0
            return
        if now - self._since >= self.after_s and now - self._said >= self.after_s:
            self._said = now
            print(f"stall: no operator finished for {now - self._since:.0f} s; running:\n  "
                  + ("\n  ".join(running_jobs(self.pool, usage)) or "nothing"),
                  file=sys.stderr, flush=True)
            if not self._stacks_shown:  # once a sweep: a stall's stacks are long
                self._stacks_shown = True
                print(judge_stacks(self.pool), file=sys.stderr, flush=True)


def running_jobs(pool: Any, usage: list[Any]) -> list[str]:
    """Each job running: its worker, operator and seconds, where it is at the device's gate,
    and what its judge says it is doing (judge_status.py)."""
    now = time.monotonic()
    statuses = getattr(pool, "judge_statuses", dict)()
    return [f"{u.slot or 0}: {u.running} for {now - u.running_since:.0f} s"
            + (f", at the gate {u.gate}" if u.gate else "")
            + (f" (sharing cap {u.sharing_cap})" if u.sharing_cap else "")
            + (f"; judge: {judge_status.describe(statuses[u.slot])}"
               if u.slot in statuses else "")
            for u in usage if u.running]


def judge_stacks(pool: Any) -> str:
    """Every judge's threads' stacks now (DevicePool.judge_stacks), under its slot's name."""
    stacks = getattr(pool, "judge_stacks", dict)()
    return "\n".join(f"judge {slot or 0}'s stacks:\n{text.rstrip()}"
                     for slot, text in stacks.items()) or "no judge stacks"


def _interleaved(op_ids: list[str]) -> list[str]:
    """One operator of each source in turn, so that a sweep cut by its deadline has reached
    every source."""
    sources: dict[str, list[str]] = {}
    for op in sorted(op_ids):
        sources.setdefault(op.split(".")[0], []).append(op)
    queues = list(sources.values())
    return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]


def latest_rows(db: Path) -> list[dict[str, Any]]:
    with ResultStore(db) as store:
        runs = store.runs()
        return store.results(runs[-1]["id"]) if runs else []


def by_source(rows: list[dict[str, Any]]) -> str:
    table = []
    for source in sorted({row["op"].split(".")[0] for row in rows}):
        mine = [row for row in rows if row["op"].split(".")[0] == source]
        passed = [row for row in mine if row["verdict"] == "pass"]
        speedups = [row["speedup"] for row in passed if row.get("speedup")]
        durations = [row_detail(row).get("duration_s", 0.0) for row in mine]
        table.append([source, len(mine), len(passed),
                      f"{geometric_mean(speedups):.3f}" if speedups else "-",
                      f"{sum(durations) / max(1, len(mine)):.1f}"])
    return render_table(["source", "operators", "pass", "speedup (geo)", "eval s/op"], table)


def compare(rows: list[dict[str, Any]], other: list[dict[str, Any]]) -> list[str]:
    mine = {row["op"]: row for row in rows}
    theirs = {row["op"]: row for row in other}
    common = sorted(set(mine) & set(theirs))
    differ = [f"{op}: {theirs[op]['verdict']} -> {mine[op]['verdict']}" for op in common
              if mine[op]["verdict"] != theirs[op]["verdict"]]
    by_op = {op: mine[op]["speedup"] / theirs[op]["speedup"] for op in common
             if mine[op].get("speedup") and theirs[op].get("speedup")}
    ratios = list(by_op.values())
    lines = [f"compared with the other run: {len(common)} operators in both, "
             f"{len(differ)} verdicts differ"]
    lines += [f"  {line}" for line in differ]
    if ratios:
        ordered = sorted(ratios)
        quantile = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
        lines.append(f"speedup ratio (this / other) over {len(ratios)} operators: geometric "
                     f"mean {geometric_mean(ratios):.4f}; per operator p10 {quantile(0.1):.3f}, "
                     f"median {quantile(0.5):.3f}, p90 {quantile(0.9):.3f}")
        # Each operator's, lowest first: whether one run's spread covers another's is read
        # per operator (issue 25's one-worker comparison), from the output alone.
        lines.append("speedup ratio per operator (this / other): " + ", ".join(
            f"{op} {ratio:.3f}" for op, ratio in sorted(by_op.items(), key=lambda kv: kv[1])))
    return lines


def memory_peaks(rows: list[dict[str, Any]], top: int = 3) -> str:
    """Device memory each job held at most, its judge's and its runner's (as the runner said)
    added: what decides how many jobs a device can check at once."""
    peaks, judges, runners = [], [], []
    for row in rows:
        detail = row_detail(row)
        judge, runner = detail.get("device_peak_judge_bytes"), detail.get("device_peak_runner_bytes")
        if judge is not None or runner is not None:
            peaks.append(((judge or 0) + (runner or 0), row["op"]))
            judges.append(judge or 0)
            runners.append(runner or 0)
    if not peaks:
        return "device memory peaks: not recorded (the backend keeps no count)"
    peaks.sort()
    gib = 1 << 30
    largest = ", ".join(f"{op} {held / gib:.1f}" for held, op in reversed(peaks[-top:]))
    return (f"device memory peaks, judge and runner together, GiB per job: median "
            f"{statistics.median(p for p, _ in peaks) / gib:.1f}, largest {largest}; "
            f"in all {sum(judges) / gib:.1f} judges' and {sum(runners) / gib:.1f} runners'")


def judge_peaks_by_stage(rows: list[dict[str, Any]]) -> str:
    """The judges' device memory peak within each stage (``EvalResult.judge_peak_by_stage``):
    the median over jobs, the largest, and how many jobs had their peak in that stage. The gate
    admits a job by its whole peak; this says which stage sets it, and so what to shrink."""
    by_stage: dict[str, list[int]] = {}
    deciding: dict[str, int] = {}
    for row in rows:
        peaks = row_detail(row).get("judge_peak_by_stage") or {}
        for name, held in peaks.items():
            by_stage.setdefault(name, []).append(int(held))
        if peaks:
            top = max(peaks, key=lambda name: peaks[name])
            deciding[top] = deciding.get(top, 0) + 1
    if not by_stage:
        return "judges' device memory by stage: not recorded"
    gib = 1 << 30
    return ("judges' device memory by stage, GiB (median, largest; jobs whose peak it set): "
            + "; ".join(f"{name} {statistics.median(held) / gib:.1f}, {max(held) / gib:.1f}; "
                        f"{deciding.get(name, 0)}" for name, held in by_stage.items()))


ROW_FIELDS = ("device_alone_s", "device_wait_s", "device_wait_alone_s", "memory_wait_s")


def operator_rows(rows: list[dict[str, Any]]) -> str:
    """One line per finished operator, in the order they finished: its verdict, seconds
    (judged, held alone, waited for the lock, of which to hold it alone, waited for memory),
    the device memory its judge and runner held at most (GiB), its check and timing stages'
    seconds, and the first try of a job run again alone. The raw rows a device call brings
    back (``--rows``), beside the store."""
    gib = 1 << 30
    lines = ["# op verdict duration_s " + " ".join(ROW_FIELDS)
             + " peak_judge_gib peak_runner_gib trials_s timing_s retried_alone"]
    for row in rows:
        detail = row_detail(row)
        stages = detail.get("stage_s") or {}
        peaks = [detail.get(f"device_peak_{side}_bytes") for side in ("judge", "runner")]
        lines.append(" ".join([
            row["op"], str(row.get("verdict")), f"{float(row.get('duration_s') or 0):.1f}",
            *(f"{float(detail.get(name) or 0):.1f}" for name in ROW_FIELDS),
            *("-" if peak is None else f"{peak / gib:.2f}" for peak in peaks),
            f"{float(stages.get('trials', 0)):.1f}", f"{float(stages.get('timing', 0)):.1f}",
            repr(str(detail.get("retried_alone") or "")[:100])]))
    return "\n".join(lines)


def memory_admission(pool: Any, usage: list[Any]) -> str:
    """How the device's gate admitted jobs: by bytes against its capacity (the jobs' waits for
    memory), or by count; and the jobs run again alone after running out of memory."""
    retried = sum(u.retried_alone for u in usage)
    gates = pool.memory_gates() if hasattr(pool, "memory_gates") else []
    if not gates:
        return f"jobs admitted by count; run again alone after running out of memory: {retried}"
    said = "; ".join(f"device {g['device'] if g['device'] is not None else 0}: capacity "
                     f"{g['capacity_bytes'] / (1 << 30):.1f} GiB, jobs waited for memory "
                     f"{g['memory_waited_s']:.1f} s in all, {g.get('passed', 0)} admitted "
                     f"ahead of one waiting before them" for g in gates)
    memory = getattr(pool, "memory", None)
    sources = memory.source_counts() if memory is not None else {}
    needs = ", ".join(f"{source} {count}" for source, count in sorted(sources.items()))
    return f"jobs admitted by device memory ({said}); needs from: {needs or 'none read'}; " \
           f"run again alone after running out of memory: {retried}"


def worker_time(rows: list[dict[str, Any]], usage: list[Any], wall: float) -> str:
    """Every worker's time over the wall, split: waiting at the device's gate for memory,
    its judge waiting for the device's lock, holding the device alone (timing), checking; the
    rest of the workers' busy time (what the judges do not count, jobs cut at the deadline,
    retries), and idle time. Where a sweep's time goes: the issue's profile, in one line."""
    details = [row_detail(row) for row in rows]
    total = len(usage) * wall
    busy = sum(u.busy_s for u in usage)
    memory = sum(float(d.get("memory_wait_s") or 0.0) for d in details)
    lock = sum(float(d.get("device_wait_s") or 0.0) for d in details)
    alone = sum(float(d.get("device_alone_s") or 0.0) for d in details)
    judged = sum(float(row.get("duration_s") or 0.0) for row in rows)
    parts = [("waiting at the gate for memory", memory), ("judges waiting for the lock", lock),
             ("holding the device alone", alone), ("checking", judged - lock - alone),
             ("outside the judges' count (runner starts, unfinished jobs, retries)",
              busy - memory - judged), ("idle", total - busy)]
    return (f"worker time, {len(usage)} workers x {wall:.0f} s = {total:.0f} s: " + ", ".join(
        f"{name} {seconds:.0f} ({100 * seconds / max(total, 1e-9):.0f} %)"
        for name, seconds in parts))


def where_the_time_went(rows: list[dict[str, Any]], wall: float) -> str:
    """Seconds per operator in each check stage (summed over the judges, which overlap), and
    the device held alone: the share of the wall no other judge could use the device."""
    details = [row_detail(row) for row in rows]
    stages: dict[str, float] = {}
    for detail in details:
        for name, seconds in (detail.get("stage_s") or {}).items():
            stages[name] = stages.get(name, 0.0) + float(seconds)
    alone = sum(float(detail.get("device_alone_s") or 0.0) for detail in details)
    count = max(1, len(rows))
    per_stage = ", ".join(f"{name} {seconds / count:.2f}" for name, seconds in stages.items())
    ahead = sum(float(detail.get("drawn_ahead_s") or 0.0) for detail in details)
    waited = sum(float(detail.get("draw_ahead_waited_s") or 0.0) for detail in details)
    if ahead:  # outside every step, mostly on the job's draw plan's thread (draw_ahead.py)
        per_stage += (f"; inputs drawn ahead holding no lock {ahead / count:.2f}, of which the "
                      f"jobs waited for {waited / count:.2f} inside those stages")
    # Inside the hold, per timed case: the candidate's time request (the runner's own split
    # of it), the baseline (timed, or taken from the store). After it, beside other judges:
    # the samples copied out, and before it the baseline's untimed first call, where made.
    hold: dict[str, float] = {}
    after: dict[str, float] = {}
    held: list[float] = []  # each timed case's whole hold (the runner's split is inside it)
    cases = 0
    for detail in details:
        for timing in detail.get("timings") or ():
            parts = dict(timing.get("hold_s") or {})
            cases += bool(parts)
            if parts:
                held.append(sum(float(v) for k, v in parts.items() if k != "runner"))
            _add_parts(hold, parts)
            _add_parts(after, dict(timing.get("samples_s") or {}), "samples ")
            if timing.get("baseline_warmed_s") is not None:
                after["baseline's first call"] = (after.get("baseline's first call", 0.0)
                                                  + float(timing["baseline_warmed_s"]))
    inside = ", ".join(f"{name} {seconds / max(cases, 1):.3f}" for name, seconds in hold.items())
    # The mean hides the shape: a few slow kernels (a baseline that loops in Python) make most
    # of it, and the median case is what a faster timer would have to win back.
    held.sort()
    spread = (f"; the case's whole hold: median {held[len(held) // 2]:.3f}, 90th percentile "
              f"{held[int(len(held) * 0.9)]:.3f}, longest {held[-1]:.3f}" if held else "")
    outside = ", ".join(f"{name} {seconds / max(cases, 1):.3f}"
                        for name, seconds in after.items())
    return (f"s per operator by stage: {per_stage or 'none recorded'}\n"
            f"device held alone (timing): {alone:.1f} s in all, {alone / count:.2f} s per "
            f"operator, {100 * alone / max(wall, 1e-9):.0f} % of the wall\n"
            f"inside the hold, s per timed case ({cases} cases): {inside or 'none recorded'}"
            f"{spread}\n"
            f"outside it, s per timed case: {outside or 'none recorded'}")


LONGEST_SHOWN = 8  # operators named in the summary's line of longest shared steps


def stage_sums(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Per stage, the steps held shared over every row (``EvalResult.shared_steps``): [count,
    seconds, the longest]."""
    sums: dict[str, list[float]] = {}
    for row in rows:
        for stage, (count, total, longest) in (row_detail(row).get("shared_steps")
                                               or {}).items():
            entry = sums.setdefault(stage, [0, 0.0, 0.0])
            entry[0] += count
            entry[1] += total
            entry[2] = max(entry[2], longest)
    return sums


def shared_steps(rows: list[dict[str, Any]]) -> str:
    """The steps the judges held the device shared, by stage (``EvalResult.shared_steps``):
    how many, their mean and the longest. A judge about to time waits for the steps under way
    to end, so the long ones are what its wait, and every other judge's behind it, is made of."""
    sums = stage_sums(rows)
    longest_steps = [(float(longest), str(row.get("op")), stage)  # (seconds, operator, stage)
                     for row in rows for stage, (_, _, longest)
                     in (row_detail(row).get("shared_steps") or {}).items()]
    if not sums:
        return "steps held shared: none recorded"
    # Which operators the long steps are: one slow reference or first call (a Python loop, a
    # compile) is what every judge about to time, and all behind it, waits for.
    longest_steps.sort(reverse=True)
    return ("steps held shared, by stage (count, sum s, mean s, longest s): " + "; ".join(
        f"{stage} {int(count)}, {total:.1f}, {total / max(count, 1):.3f}, {longest:.2f}"
        for stage, (count, total, longest) in sums.items())
        + "\nlongest steps held shared (s, operator, stage): " + ", ".join(
            f"{seconds:.2f} {op} {stage}" for seconds, op, stage in longest_steps[:LONGEST_SHOWN]))


def step_parts(rows: list[dict[str, Any]]) -> str:
    """Where the shared steps' seconds went, by stage (``EvalResult.step_parts``), in s per
    step: the judge's drawing, copying, packing, unpacking and judging, the request's round
    trip and, inside it, the runner's own split ("runner ..."). What no part names (the
    lock's bookkeeping, the runner's start) is "other"."""
    sums: dict[str, dict[str, float]] = {}
    for row in rows:
        for stage, parts in (row_detail(row).get("step_parts") or {}).items():
            into = sums.setdefault(stage, {})
            for name, seconds in parts.items():
                into[name] = into.get(name, 0.0) + float(seconds)
    if not sums:
        return "inside the steps held shared: none recorded"
    steps = stage_sums(rows)
    lines = []
    for stage, parts in sums.items():
        count, total, _ = steps.get(stage, [0, 0.0, 0.0])
        named = sum(seconds for name, seconds in parts.items() if not name.startswith("runner"))
        shown = {**parts, "other": total - named}
        lines.append(f"{stage} ({int(count)} steps): " + ", ".join(
            f"{name} {seconds / max(count, 1):.3f}" for name, seconds in shown.items()))
    # Triton compiling in the runners, against every second held shared (the runners' starts
    # and ends included): what compiling ahead would take out of the steps a timing drains.
    compiling = sum(parts.get("runner compile", 0.0) for parts in sums.values())
    held = sum(total for _, total, _ in steps.values())
    if compiling and held:
        lines.append(f"compiling in the runner {compiling:.1f} of {held:.1f} s held shared "
                     f"({100 * compiling / held:.0f} %)")
    return "inside the steps held shared, s per step: " + "; ".join(lines)


def candidate_timings(rows: list[dict[str, Any]]) -> str:
    """The candidates' timings: how many repetitions each took, the kernel's median, and the
    runner's timed calls' seconds per repetition (warm-up and estimate included), each as
    median and 90th percentile over the timed cases. What a shorter hold alone would have to
    take fewer of, or make cheaper."""
    reps, medians, per_rep = [], [], []
    outran = 0  # cases with calls the host issued after their device lead ran out
    for detail in (row_detail(row) for row in rows):
        for timing in detail.get("timings") or ():
            candidate = timing.get("candidate") or {}
            count = int(candidate.get("repetitions") or 0)
            if not count:
                continue
            outran += bool(candidate.get("lead_outruns"))
            reps.append(count)
            medians.append(float(candidate.get("median_ms") or 0.0))
            calls = ((timing.get("hold_s") or {}).get("runner") or {}).get("timed calls")
            if calls is not None:
                per_rep.append(1e3 * float(calls) / count)
    if not reps:
        return "candidate timings: none recorded"

    def spread(values: list[float], unit: str = " ms", form: str = ".3g") -> str:
        values = sorted(values)
        return (f"median {values[len(values) // 2]:{form}}{unit}, 90th percentile "
                f"{values[int(len(values) * 0.9)]:{form}}{unit}")

    return (f"candidate timings ({len(reps)} cases): repetitions {spread(reps, '', 'd')}; "
            f"kernel time {spread(medians)}; runner's timed calls per repetition "
            + (spread(per_rep) if per_rep else "not recorded")
            + f"; cases with a call that outran its device lead {outran}")


def device_bound(rows: list[dict[str, Any]], workers_per_device: int, devices: int = 1) -> str:
    """The least wall these jobs could take, whatever the scheduling: while a judge holds its
    device alone no other judge's step runs on it, so a device's holds add up one after
    another, and the steps held shared fill the rest, at most ``workers_per_device`` at once
    (the jobs taken as spread evenly over ``devices``). The host work between steps (a
    compile, packing, comparing) overlaps both and is not counted. It says whether a sweep's
    target needs shorter holds and steps, or only better scheduling."""
    details = [row_detail(row) for row in rows]
    alone = sum(float(detail.get("device_alone_s") or 0.0) for detail in details)
    shared = sum(float(total) for detail in details
                 for _, total, _ in (detail.get("shared_steps") or {}).values())
    if not rows or not shared:
        return "the devices' bound: no shared steps recorded"
    workers, devices = max(workers_per_device, 1), max(devices, 1)
    bound = (alone + shared / workers) / devices
    return (f"the devices' bound ({devices} x {workers} workers): (held alone {alone:.1f} s + "
            f"steps held shared {shared:.1f} s / {workers}) / {devices} = {bound:.1f} s for "
            f"{len(rows)} operators ({bound / len(rows):.2f} s each), operators/min "
            f"{60 * len(rows) / bound:.1f} at most")


def _add_parts(sums: dict[str, float], parts: dict[str, Any], prefix: str = "") -> None:
    """``parts`` (names to seconds, the runner's own split under "runner") added to ``sums``."""
    runner = parts.pop("runner", None) or {}
    parts.update({f"runner {name}": seconds for name, seconds in runner.items()})
    for name, seconds in parts.items():
        sums[prefix + name] = sums.get(prefix + name, 0.0) + float(seconds)


def submissions(registry: Any, op_ids: list[str], samples: int) -> Path:
    """A files-method folder holding each operator's reference kernel as samples 0 to
    ``samples - 1`` (``<op>.py``, ``<op>.sample<k>.py``): candidates of one operator that a
    judge checks one after another, as a method's samples are."""
    folder = Path(tempfile.mkdtemp(prefix="kgb-full-sweep-samples-"))
    for op in op_ids:
        source = registry.operator(op).reference_kernel()
        for sample in range(samples):
            (folder / (f"{op}.py" if sample == 0 else f"{op}.sample{sample}.py")).write_text(source)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--source", action="append", default=[])
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--workers-per-device", type=int, default=1)
    parser.add_argument("--devices", default=None)
    parser.add_argument("--db", default="full-sweep.db")
    parser.add_argument("--baselines", default=None, help="as kgb run --baselines")
    parser.add_argument("--retime-baselines", action="store_true")
    parser.add_argument("--median-interval", type=float, default=0.0)
    parser.add_argument("--whole-repetition-budget", action="store_true",
                        help="count the timer's budgets in a whole repetition's time, its "
                             "prepare and flush included (TimingSettings)")
    parser.add_argument("--device-lead", action="store_true",
                        help="queue device time before each timed call's start event, as "
                             "long as the host takes to issue the call (TimingSettings."
                             "device_lead): the runner's recorded host work then stays out "
                             "of the timed region")
    parser.add_argument("--timing-gather-s", type=float, default=0.0,
                        help="as kgb run --timing-gather-s (DeviceLock.gather_s)")
    parser.add_argument("--median-floor", type=int, default=0,
                        help="the first batch under --median-interval (TimingSettings)")
    parser.add_argument("--deadline-s", type=float, default=0.0)
    parser.add_argument("--compare", default=None, help="another store to set this run against")
    parser.add_argument("--same-as", default=None,
                        help="the operators another store's latest run evaluated (with --limit, "
                             "N of them spread over it)")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--rows", default=None,
                        help="write one line per finished operator here (operator_rows)")
    parser.add_argument("--give-up-s", type=float, default=0.0,
                        help="report what finished and end the process after this many "
                             "seconds, whatever still runs (0: never)")
    parser.add_argument("--samples", type=int, default=1,
                        help="candidates per operator: each operator's reference kernel that "
                             "many times, through the files method (a multi-sample run)")
    args = parser.parse_args()

    registry = load_registry()
    if args.same_as:
        op_ids = [row["op"] for row in latest_rows(Path(args.same_as))]
    else:
        op_ids = _interleaved([s.id for s in registry.operators(args.source)
                               if s.reference_kernel is not None])
    op_ids = spread(op_ids, args.limit)
    config = RunConfig(ops=op_ids, backend=args.backend, method="reference", seeds=[0],
                       db=args.db, timing=not args.no_timing, devices=args.devices,
                       workers_per_device=args.workers_per_device, baselines=args.baselines,
                       retime_baselines=args.retime_baselines,
                       timing_gather_s=args.timing_gather_s)
    if args.samples > 1:
        config.method = "files"
        config.method_options = {"path": str(submissions(registry, op_ids, args.samples)),
                                 "samples": args.samples}
    if args.median_interval:
        config.timing_settings = {"median_interval": args.median_interval,
                                  **({"median_floor": args.median_floor}
                                     if args.median_floor else {})}
    if args.whole_repetition_budget:
        config.timing_settings = {**(config.timing_settings or {}),
                                  "whole_repetition_budget": True}
    if args.device_lead:
        config.timing_settings = {**(config.timing_settings or {}), "device_lead": True}
    plan = plan_sweep(config, registry)
    print(f"full sweep: {len(op_ids)} operators, backend {plan.backend.label}, "
          f"{args.workers_per_device} worker(s) per device, timing "
          f"{'off' if args.no_timing else 'on'}", flush=True)

    started = time.monotonic()
    deadline = started + args.deadline_s if args.deadline_s else None
    pool = make_pool(plan)
    with ResultStore(args.db) as store, BusySampler() as busy, StallWatch(pool):
        # A job that never ends would keep the sweep, and this summary, past a device call's
        # limit: at give_up_s what finished is reported and the process ends.
        giving_up = threading.Timer(args.give_up_s, give_up, (args, started, pool, busy))
        giving_up.daemon = True
        if args.give_up_s:
            giving_up.start()
        outcome = run_sweep(plan, registry, store, resume=False,
                            progress_factory=lambda total: Progress(total, stream=sys.stderr),
                            stop_at=deadline, pool=pool)
        giving_up.cancel()
    summarise(args, time.monotonic() - started, outcome.usage, busy, pool)


def give_up(args: argparse.Namespace, started: float, pool: Any, busy: "BusySampler") -> None:
    running = running_jobs(pool, pool.usage())
    print(f"gave up after {args.give_up_s:.0f} s with {len(running)} job(s) still running:\n  "
          + "\n  ".join(running), flush=True)
    if running:
        print(judge_stacks(pool), flush=True)
    print("what finished:", flush=True)
    summarise(args, time.monotonic() - started, pool.usage(), busy, pool)
    sys.stdout.flush()
    os._exit(3)


def summarise(args: argparse.Namespace, wall: float, usage: list[Any],
              busy: "BusySampler", pool: Any) -> None:
    """What the sweep's store holds, and where its time went; the last line is the rate."""
    rows = latest_rows(Path(args.db))
    if args.rows:
        Path(args.rows).write_text(operator_rows(rows) + "\n")
    print(by_source(rows))
    details = [row_detail(row) for row in rows]
    waits = [detail.get("device_wait_s", 0.0) for detail in details]
    to_hold = sum(detail.get("device_wait_alone_s", 0.0) for detail in details)
    gathered = sum(detail.get("device_gathered_s", 0.0) for detail in details)
    print(f"judges waited for the device's lock {sum(waits):.1f} s in all "
          f"({sum(waits) / max(1, len(rows)):.2f} s per operator; to hold it alone "
          f"{to_hold:.1f} s, for the checks under way to end"
          + (f", of which {gathered:.1f} s gathering other timings (--timing-gather-s "
             f"{args.timing_gather_s:g})" if args.timing_gather_s else "") + ")")
    print(where_the_time_went(rows, wall))
    print(candidate_timings(rows))
    print(shared_steps(rows))
    print(step_parts(rows))
    print(device_bound(rows, args.workers_per_device,
                       max(1, len(usage) // max(1, args.workers_per_device))))
    print(memory_peaks(rows))
    print(judge_peaks_by_stage(rows))
    print(memory_admission(pool, usage))
    print(worker_time(rows, usage, wall))
    print(baseline_note(rows).strip() or "baselines: none timed")
    print("evaluation workers: " + "; ".join(
        f"{u.slot}: {u.jobs} jobs, busy {100 * u.busy_s / wall:.0f} %" for u in usage))
    print(f"GPU busy (nvidia-smi): {busy.summary()}")
    print(f"host CPU busy (/proc/stat): {busy.host_summary()}")
    if args.compare:
        print("\n".join(compare(rows, latest_rows(Path(args.compare)))))
    if args.samples > 1:
        print(f"candidates {len(rows)}, wall {wall:.1f} s, "
              f"candidates/min {60 * len(rows) / wall:.1f}")
    operators = len({row["op"] for row in rows})
    print(f"operators {operators}, wall {wall:.1f} s, operators/min {60 * operators / wall:.1f}",
          flush=True)

if __name__ == "__main__":
    main()
