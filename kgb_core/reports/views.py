"""The report's views as data: computed once from the store's rows, rendered by
``render_md``, ``render_html`` and ``render_csv`` (and ``kgb report --json``).

- MS view (many sources, one chip at a time): per source, method and backend, compile rate,
  correct %, the distribution of the correct operators' speedups, fast_p for
  p in {0, 0.5, 1, 1.5, 2} and the fast_p curve.
- MC view (many chips): the cross-chip operators (those carrying their source's
  ``cross_chip_tag``: ATen's ``mc110``), per backend and method, correct % and speedup,
  and per method the transfer matrix: of the operators solved on backend A (and tried on B),
  the share also solved on B.
- cost: tokens and dollars per attempted and per solved operator, per method and backend.
- per operator: verdicts, best candidate, speedup and roofline %.

Counting follows ``kgb_core.report`` (one place decides what an operator's outcome is:
``operator_outcomes``): an operator is correct when any sample passed, its speedup is its
fastest passing sample's, skipped operators leave every ratio alone. fast_p is the share of the
operators tried that are correct and more than p times faster than the baseline; a group with
no timed result at all (``--no-timing``) has no fast_p (None), not a fast_p of 0.

Roofline %: for each timed case, the time the device's calibrated peaks allow,
``max(FLOPs / matmul peak of the dtype, bytes / copy bandwidth)``, over the measured median;
per operator the geometric mean over its timed cases. The matmul rate is the compute peak for
every operator of that dtype (it is the fastest thing the chip does; an elementwise kernel is
memory-bound long before it matters). Where no compute peak of the dtype was calibrated (int,
fp64) only the memory term is used and the row says so. Interpreter timings get no roofline %:
they measure Triton's interpreter, not a chip.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from kgb_core.backends import backend_label
from kgb_core.calibration import COPY_METRIC, matmul_metric
from kgb_core.evaluation import verdicts
from kgb_core.labels import method_label, plan_label
from kgb_core.report import (EMULATION, INTERPRETER, OperatorOutcome, backend_kinds,
                             generation_effort, operator_outcomes, summarize, verdict_counts)
from kgb_core.reports.leaderboard import LeaderboardRow, leaderboard
from kgb_core.stats import geometric_mean
from kgb_core.timing import measures_hardware

FAST_P_THRESHOLDS = (0.0, 0.5, 1.0, 1.5, 2.0)
CURVE_POINTS = 81

# A sample that reached these verdicts never got past the screen or the compiler.
NOT_COMPILED = frozenset({verdicts.SCREEN_REJECTED, verdicts.COMPILE_ERROR,
                          verdicts.NO_CANDIDATE})



@dataclass(frozen=True)
class OperatorFacts:
    """What the installed source says of one operator: its tags and, per (case, dtype), the
    FLOP and byte counts its spec declares."""

    tags: frozenset[str]
    counts: Mapping[tuple[str, str], tuple[float, float]]
    # Whether it is in its source's cross-chip set (``OperatorSource.cross_chip_tag``).
    cross_chip: bool = False


def operator_facts(registry: Any, op_ids: Iterable[str]) -> dict[str, OperatorFacts]:
    """Facts for every operator the registry knows; an operator whose source is not installed
    is left out (the report then shows its roofline as n/a and cannot place it in the MC
    view)."""
    from kgb_core.operators import dtype_itemsize

    facts = {}
    for op_id in sorted(set(op_ids)):
        try:
            spec = registry.operator(op_id)
        except Exception:  # an uninstalled source: its stored results still show
            continue
        counts = {}
        for case in spec.cases:
            for dtype in spec.dtypes:
                counts[(case.name, dtype)] = (float(spec.flops(case.params)),
                                              float(spec.bytes_moved(case.params,
                                                                     dtype_itemsize(dtype))))
        tag = registry.source(spec.source).cross_chip_tag
        facts[op_id] = OperatorFacts(tags=frozenset(spec.tags), counts=counts,
                                     cross_chip=bool(tag) and tag in spec.tags)
    return facts


def quantile(ordered: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default), on sorted values."""
    if not ordered:
        return None
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def fast_p(outcomes: Sequence[OperatorOutcome], p: float) -> float:
    tried = len(outcomes)
    hits = sum(1 for o in outcomes if o.correct and o.best_speedup and o.best_speedup > p)
    return hits / tried if tried else 0.0


# -- rows of the views ----------------------------------------------------------------------
@dataclass
class MsRow:
    source: str
    method: str
    backend: str
    kind: str
    operators: int
    skipped: int
    compiled: int
    compile_rate: float | None
    correct: int
    correct_pct: float | None
    timed: int
    speedup_geomean: float | None
    speedup_min: float | None
    speedup_p25: float | None
    speedup_median: float | None
    speedup_p75: float | None
    speedup_max: float | None
    fast_p: dict[str, float] | None
    speedups: list[float] = field(default_factory=list)

    @property
    def group(self) -> str:
        return f"{self.source} / {self.method} / {self.backend}"


@dataclass
class FastPCurve:
    """fast_p on a grid of p (``points``), and what it is the step function of: the best
    speedups of the correct operators over ``tried`` operators."""

    group: str
    kind: str
    points: list[tuple[float, float]]
    speedups: list[float] = field(default_factory=list)
    tried: int = 0


@dataclass
class McRow:
    method: str
    backend: str
    kind: str
    operators: int
    skipped: int
    correct: int
    correct_pct: float | None
    speedup_geomean: float | None
    fast_1: float | None


@dataclass
class TransferMatrix:
    """``cells[a][b]``: of the operators solved on ``a`` and tried on ``b``, the share solved on
    ``b`` (``share``), with the counts it comes from."""

    method: str
    backends: list[str]
    kinds: dict[str, str]
    cells: dict[str, dict[str, dict[str, Any]]]


@dataclass
class CostRow:
    method: str
    backend: str
    kind: str
    operators: int
    attempted: int
    solved: int
    samples: int
    prompt_tokens: int
    completion_tokens: int
    tokens: int
    cost_usd: float
    tokens_per_attempted: float | None
    tokens_per_solved: float | None
    cost_per_attempted: float | None
    cost_per_solved: float | None
    # Where the method records them (kgb_core.report.generation_effort): seconds spent making
    # the candidates, and the agent's own runs of the evaluator; None where no row says.
    generation_s: float | None = None
    generation_s_per_solved: float | None = None
    evaluator_calls: int | None = None
    evaluator_calls_per_solved: float | None = None


@dataclass
class OperatorRow:
    op: str
    source: str
    method: str
    backend: str
    kind: str
    device_name: str
    samples: int
    verdicts: str
    skipped: bool
    compiled: bool
    correct: bool
    best_sample: int | None
    speedup: float | None
    candidate_ms: float | None
    reference_ms: float | None
    timing_label: str
    roofline_pct: float | None
    reference_roofline_pct: float | None
    bound: str
    roofline_note: str
    tokens: int
    cost_usd: float
    best_source: str | None = None
    # The best sample came from a trusted method's run (the shipped kernels: Method.trusted).
    trusted: bool = False


@dataclass
class ReportData:
    generated_at: str
    title: str
    runs: list[dict[str, Any]]
    peaks: dict[str, dict[str, dict[str, Any]]]
    summary: list[dict[str, Any]]
    ms: list[MsRow]
    fast_p_curves: list[FastPCurve]
    mc: list[McRow]
    transfer: list[TransferMatrix]
    cost: list[CostRow]
    operators: list[OperatorRow]
    notes: list[str]
    mc_note: str = ""
    # The first view: one row per method label and backend (kgb_core/reports/leaderboard.py).
    leaderboard: list[LeaderboardRow] = field(default_factory=list)

    def to_dict(self, with_sources: bool = False) -> dict[str, Any]:
        data = asdict(self)
        if not with_sources:
            for row in data["operators"]:
                row.pop("best_source", None)
        return data


# -- building --------------------------------------------------------------------------------
def _key(row: Mapping[str, Any]) -> tuple[str, str, str, str, str]:
    return (row["source"], method_label(row), row["backend"], row.get("emulates") or "",
            row["op"])


def _best_row(samples: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The passing sample with the highest speedup (the first passing one when untimed)."""
    passing = [r for r in samples if r["verdict"] == verdicts.PASS]
    if not passing:
        return None
    timed = [r for r in passing if r.get("speedup")]
    if timed:
        return max(timed, key=lambda r: r["speedup"])
    return min(passing, key=lambda r: r["sample"])


def _device_names(runs: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    names = {}
    for run in runs:
        worker = (run.get("environment") or {}).get("worker") or {}
        names[int(run["id"])] = worker.get("device_name") or ""
    return names


def roofline(row: Mapping[str, Any], facts: OperatorFacts | None,
             device_peaks: Mapping[str, Mapping[str, Any]] | None,
             device_name: str) -> tuple[float | None, float | None, str, str]:
    """(candidate %, baseline %, bound, note) for one passing result; None % with a note
    saying why where there is no honest number."""
    label = row.get("timing_label") or ""
    if label and not measures_hardware(label):
        return None, None, "", "n/a: timed in Triton's interpreter (no performance number)"
    detail = row.get("detail")
    detail = json.loads(detail) if isinstance(detail, str) else (detail or {})
    timings = detail.get("timings") or []
    if not timings:
        return None, None, "", "n/a: not timed"
    if facts is None:
        return None, None, "", "n/a: operator not installed here (no FLOP/byte counts)"
    if not device_peaks or COPY_METRIC not in device_peaks:
        return None, None, "", (f"n/a: no peaks for {device_name or 'this device'} "
                                f"(run `kgb calibrate` on it)")
    bandwidth = float(device_peaks[COPY_METRIC]["value"])
    candidate, baseline, bounds, memory_only = [], [], Counter(), set()
    for timing in timings:
        counts = facts.counts.get((timing["case"], timing["dtype"]))
        if counts is None:
            continue
        flops, moved = counts
        compute_peak = device_peaks.get(matmul_metric(timing["dtype"]))
        memory_s = moved / bandwidth
        compute_s = flops / float(compute_peak["value"]) if compute_peak and flops else 0.0
        if compute_peak is None and flops:
            memory_only.add(timing["dtype"])
        bound_ms = max(memory_s, compute_s) * 1e3
        if bound_ms <= 0:
            continue
        bounds["compute" if compute_s > memory_s else "memory"] += 1
        candidate.append(100.0 * bound_ms / timing["candidate"]["median_ms"])
        baseline.append(100.0 * bound_ms / timing["reference"]["median_ms"])
    if not candidate:
        return None, None, "", "n/a: no timed case has FLOP/byte counts"
    bound = bounds.most_common(1)[0][0] if len(bounds) == 1 else "mixed"
    note = ""
    if memory_only:
        note = (f"memory term only for {', '.join(sorted(memory_only))} (no matmul peak "
                f"calibrated for it)")
    return geometric_mean(candidate), geometric_mean(baseline), bound, note


def _curve(outcomes: Sequence[OperatorOutcome]) -> list[tuple[float, float]]:
    speedups = [o.best_speedup for o in outcomes if o.correct and o.best_speedup]
    top = max([2.5] + [1.1 * s for s in speedups])
    return [(round(top * i / (CURVE_POINTS - 1), 6), fast_p(outcomes, top * i / (CURVE_POINTS - 1)))
            for i in range(CURVE_POINTS)]


def build_report(rows: Sequence[dict[str, Any]], runs: Sequence[dict[str, Any]],
                 peaks: Mapping[str, Mapping[str, Mapping[str, Any]]],
                 facts: Mapping[str, OperatorFacts], *, title: str = "kgb report",
                 generated_at: str | None = None) -> ReportData:
    outcomes = operator_outcomes(rows)
    samples_of: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        samples_of[_key(row)].append(row)
    device_of_run = _device_names(runs)
    kind_by_backend = backend_kinds(rows)

    def kind_of(o: OperatorOutcome) -> str:
        return kind_by_backend[(o.backend, o.emulates)]

    def compiled(o: OperatorOutcome) -> bool:
        return any(v not in NOT_COMPILED and v not in verdicts.SKIPPED for v in o.verdicts)

    # MS view
    groups: dict[tuple[str, str, str, str], list[OperatorOutcome]] = defaultdict(list)
    for o in outcomes:
        groups[(o.source, o.method, o.backend, o.emulates)].append(o)
    ms, curves = [], []
    for (source, method, backend, emulates), everything in sorted(groups.items()):
        tried = [o for o in everything if not o.skipped]
        correct = [o for o in tried if o.correct]
        speedups = sorted(o.best_speedup for o in correct if o.best_speedup)
        n = len(tried)
        kind = kind_of(everything[0])
        row = MsRow(
            source=source, method=method, backend=backend_label(backend, emulates), kind=kind,
            operators=n, skipped=len(everything) - n,
            compiled=sum(1 for o in tried if compiled(o)),
            compile_rate=sum(1 for o in tried if compiled(o)) / n if n else None,
            correct=len(correct), correct_pct=100.0 * len(correct) / n if n else None,
            timed=len(speedups), speedup_geomean=geometric_mean(speedups),
            speedup_min=speedups[0] if speedups else None,
            speedup_p25=quantile(speedups, 0.25), speedup_median=quantile(speedups, 0.5),
            speedup_p75=quantile(speedups, 0.75),
            speedup_max=speedups[-1] if speedups else None,
            fast_p=({f"{p:g}": fast_p(tried, p) for p in FAST_P_THRESHOLDS}
                    if speedups else None),
            speedups=speedups)
        ms.append(row)
        if speedups:
            curves.append(FastPCurve(group=row.group, kind=kind, points=_curve(tried),
                                     speedups=speedups, tried=n))

    # MC view: the cross-chip operators only
    mc_outcomes = [o for o in outcomes if o.op in facts and facts[o.op].cross_chip]
    mc_groups: dict[tuple[str, str, str], list[OperatorOutcome]] = defaultdict(list)
    for o in mc_outcomes:
        mc_groups[(o.method, o.backend, o.emulates)].append(o)
    mc = []
    for (method, backend, emulates), everything in sorted(mc_groups.items()):
        tried = [o for o in everything if not o.skipped]
        correct = [o for o in tried if o.correct]
        speedups = [o.best_speedup for o in correct if o.best_speedup]
        n = len(tried)
        mc.append(McRow(method=method, backend=backend_label(backend, emulates),
                        kind=kind_of(everything[0]), operators=n, skipped=len(everything) - n,
                        correct=len(correct),
                        correct_pct=100.0 * len(correct) / n if n else None,
                        speedup_geomean=geometric_mean(speedups),
                        fast_1=fast_p(tried, 1.0) if speedups else None))
    transfer = []
    for method in sorted({o.method for o in mc_outcomes}):
        solved: dict[str, set[str]] = defaultdict(set)
        tried_on: dict[str, set[str]] = defaultdict(set)
        kinds: dict[str, str] = {}
        for o in mc_outcomes:
            if o.method != method or o.skipped:
                continue
            label = backend_label(o.backend, o.emulates)
            kinds[label] = kind_of(o)
            tried_on[label].add(o.op)
            if o.correct:
                solved[label].add(o.op)
        names = sorted(tried_on)
        cells: dict[str, dict[str, dict[str, Any]]] = {}
        for a in names:
            cells[a] = {}
            for b in names:
                base = solved[a] & tried_on[b]
                both = base & solved[b]
                cells[a][b] = {"share": len(both) / len(base) if base else None,
                               "solved_both": len(both), "solved_on_row_and_tried": len(base)}
        transfer.append(TransferMatrix(method=method, backends=names, kinds=kinds, cells=cells))
    mc_note = ("" if mc_outcomes else
               "no results for cross-chip operators in this store (the MC view covers only "
               "the operators a source tags for every chip: ATen's mc110)")

    # cost
    cost_groups: dict[tuple[str, str, str], list[OperatorOutcome]] = defaultdict(list)
    for o in outcomes:
        if not o.skipped:
            cost_groups[(o.method, o.backend, o.emulates)].append(o)
    cost = []
    for (method, backend, emulates), tried in sorted(cost_groups.items()):
        group_rows = [r for o in tried for r in samples_of[(o.source, o.method, o.backend,
                                                            o.emulates, o.op)]]
        prompt = sum(r.get("prompt_tokens") or 0 for r in group_rows)
        completion = sum(r.get("completion_tokens") or 0 for r in group_rows)
        dollars = sum(r.get("cost_usd") or 0.0 for r in group_rows)
        attempted = sum(1 for o in tried if o.attempted)
        solved = sum(1 for o in tried if o.correct)
        tokens = prompt + completion
        # Per attempted and per solved only where some sample reported tokens (a cost): else
        # unknown, never 0.
        tokens_known = any(r.get("prompt_tokens") is not None
                           or r.get("completion_tokens") is not None for r in group_rows)
        cost_known = any(r.get("cost_usd") is not None for r in group_rows)
        efforts = [generation_effort(r) for r in group_rows]
        seconds = [s for s, _ in efforts if s is not None]
        calls = [c for _, c in efforts if c is not None]
        total_s = sum(seconds) if seconds else None
        total_calls = sum(calls) if calls else None
        cost.append(CostRow(
            method=method, backend=backend_label(backend, emulates), kind=kind_of(tried[0]),
            operators=len(tried), attempted=attempted, solved=solved, samples=len(group_rows),
            prompt_tokens=prompt, completion_tokens=completion, tokens=tokens, cost_usd=dollars,
            tokens_per_attempted=tokens / attempted if attempted and tokens_known else None,
            tokens_per_solved=tokens / solved if solved and tokens_known else None,
            cost_per_attempted=dollars / attempted if attempted and cost_known else None,
            cost_per_solved=dollars / solved if solved and cost_known else None,
            generation_s=total_s,
            generation_s_per_solved=total_s / solved if total_s is not None and solved else None,
            evaluator_calls=total_calls,
            evaluator_calls_per_solved=(total_calls / solved if total_calls is not None and solved
                                        else None)))

    # per operator
    trusted_runs = {int(r["id"]) for r in runs
                    if (r.get("environment") or {}).get("method_trusted")}
    operators = []
    for o in outcomes:
        samples = samples_of[(o.source, o.method, o.backend, o.emulates, o.op)]
        best = _best_row(samples)
        device = device_of_run.get(int(best["run_id"]), "") if best and "run_id" in best else ""
        if best is not None:
            pct, ref_pct, bound, note = roofline(best, facts.get(o.op), peaks.get(device), device)
        else:
            pct, ref_pct, bound = None, None, ""
            note = "n/a: skipped" if o.skipped else "n/a: no passing candidate"
        operators.append(OperatorRow(
            op=o.op, source=o.source, method=o.method,
            backend=backend_label(o.backend, o.emulates), kind=kind_of(o), device_name=device,
            samples=o.samples, verdicts=verdict_counts(r["verdict"] for r in samples),
            skipped=o.skipped,
            compiled=compiled(o), correct=o.correct,
            best_sample=int(best["sample"]) if best else None,
            speedup=best.get("speedup") if best else None,
            candidate_ms=best.get("candidate_ms") if best else None,
            reference_ms=best.get("reference_ms") if best else None,
            timing_label=(best.get("timing_label") or "") if best else "",
            roofline_pct=pct, reference_roofline_pct=ref_pct, bound=bound, roofline_note=note,
            tokens=o.tokens, cost_usd=o.cost_usd,
            best_source=best.get("candidate_source") if best else None,
            trusted=bool(best) and int(best.get("run_id", -1)) in trusted_runs))

    kinds = {r.kind for r in ms}
    notes = []
    if INTERPRETER in kinds or EMULATION in kinds:
        notes.append("Speedups and fast_p of interpreter (and emulation) rows were timed in "
                     "Triton's interpreter on the CPU: they measure the interpreter, not a chip, "
                     "and are no performance result. Their roofline % is n/a.")
    emulated = sorted({r.backend for r in ms if r.kind == EMULATION})
    if emulated:
        notes.append(f"{', '.join(emulated)}: another backend's quirks applied to Triton's CPU "
                     f"interpreter to test the pipeline; emulation, not results of that "
                     f"hardware.")
    summary = [s.to_dict() for s in summarize(rows)]
    run_info = [{"id": r["id"], "created_at": r["created_at"], "finished_at": r["finished_at"],
                 "method": r.get("label") or plan_label(r.get("plan") or {}),
                 "backend": (r.get("plan") or {}).get("backend"),
                 "emulates": (r.get("plan") or {}).get("emulates", ""),
                 "operators": len((r.get("plan") or {}).get("operators", [])),
                 "device_name": device_of_run.get(int(r["id"]), ""),
                 "commit": (r.get("environment") or {}).get("commit"),
                 "torch": ((r.get("environment") or {}).get("worker") or {}).get("torch"),
                 "triton": ((r.get("environment") or {}).get("worker") or {}).get("triton")}
                for r in runs]
    return ReportData(
        generated_at=generated_at or _dt.datetime.now(_dt.timezone.utc).isoformat(
            timespec="seconds"),
        title=title, runs=run_info, peaks={k: dict(v) for k, v in peaks.items()},
        summary=summary, ms=ms, fast_p_curves=curves, mc=mc, transfer=transfer, cost=cost,
        operators=operators, notes=notes, mc_note=mc_note,
        leaderboard=leaderboard(rows))
