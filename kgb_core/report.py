"""Summaries of stored results: per source, method and backend, and per operator.

An operator counts as correct when any of its samples passed (pass@k over the samples a
method made); its speedup is that of its fastest passing sample. Speedups are geometric means,
as the published benchmark takes them (per case, then per operator). fast_p is the share of
operators tried that are correct and more than p times faster than the reference. Timings made
on a backend that declares its timings measure no chip (Triton's interpreter; their stored
timer label is marked, ``kgb_core.timing.stored_label``) are no performance numbers, and the
table says so.

Operators a backend cannot run (its deny-list names them, or its quirks rule out every case)
are *skipped*: neither correct nor failed, they leave correct% and fast_p alone and are counted
in their own column, so that views across chips compare like with like. Results made in
emulation (``emulates`` set) are grouped apart from hardware results and always shown as
``cpu (emulating amd)``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

from kgb_core.backends import backend_label
from kgb_core.evaluation import verdicts
from kgb_core.labels import method_label
from kgb_core.stats import geometric_mean
from kgb_core.timing import measures_hardware

FAST_P = (1.0, 2.0)
# What a backend's timings measure: a chip, Triton's CPU interpreter, an emulation, or nothing
# (no result was timed: correctness only).
HARDWARE, EMULATION, INTERPRETER, UNTIMED = "hardware", "emulation", "interpreter", "untimed"


def backend_kind(emulates: str, timing_labels: Iterable[str]) -> str:
    labels = list(timing_labels)
    if emulates:
        return EMULATION
    if not all(measures_hardware(label) for label in labels):
        return INTERPRETER
    return HARDWARE if labels else UNTIMED


def backend_kinds(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """Each (backend, emulates) of ``rows`` with its kind, from every timer label its results
    carry."""
    labels: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in rows:
        key = (row["backend"], row.get("emulates") or "")
        labels[key].update([row["timing_label"]] if row.get("timing_label") else [])
    return {key: backend_kind(key[1], found) for key, found in labels.items()}


def verdict_counts(found: Iterable[str]) -> str:
    """Verdicts counted, as the tables show them: ``pass x2, wrong_output``."""
    counts = Counter(found)
    return ", ".join(f"{v} x{n}" if n > 1 else v for v, n in sorted(counts.items()))


@dataclass
class OperatorOutcome:
    op: str
    source: str
    method: str
    backend: str
    samples: int
    correct: bool
    best_speedup: float | None
    verdicts: list[str]
    tokens: int
    cost_usd: float
    timing_labels: list[str]
    attempted: bool = True
    first_sample_passed: bool = False
    first_pass_turn: int | None = None
    emulates: str = ""
    skipped: bool = False
    # Whether any sample reported tokens, or a cost: where none did, per-solved figures are
    # unknown, not zero.
    tokens_known: bool = False
    cost_known: bool = False


@dataclass
class GroupSummary:
    source: str
    method: str
    backend: str
    operators: int
    correct: int
    correct_pct: float
    geomean_speedup: float | None
    fast_1: float
    fast_2: float
    tokens: int
    tokens_per_solved: float | None
    cost_usd: float
    timing_labels: list[str]
    attempted: int = 0
    tokens_per_attempted: float | None = None
    cost_per_solved: float | None = None
    pass_at_1: float = 0.0
    pass_at_k: float = 0.0
    k: int = 1
    mean_turns_to_pass: float | None = None
    emulates: str = ""
    skipped: int = 0

    @property
    def backend_label(self) -> str:
        return backend_label(self.backend, self.emulates)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "backend_label": self.backend_label}


def operator_outcomes(rows: Iterable[dict[str, Any]]) -> list[OperatorOutcome]:
    grouped: dict[tuple[str, str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[(row["source"], method_label(row), row["backend"], row.get("emulates") or "",
                 row["op"])].append(row)
    outcomes = []
    for (source, method, backend, emulates, op), samples in sorted(grouped.items()):
        passing = [r for r in samples if r["verdict"] == verdicts.PASS]
        speedups = [r["speedup"] for r in passing if r["speedup"]]
        turns = [_first_pass_turn(r) for r in passing]
        outcomes.append(OperatorOutcome(
            op=op, source=source, method=method, backend=backend, samples=len(samples),
            correct=bool(passing), best_speedup=max(speedups) if speedups else None,
            verdicts=[r["verdict"] for r in samples],
            tokens=sum((r["prompt_tokens"] or 0) + (r["completion_tokens"] or 0) for r in samples),
            cost_usd=sum(r["cost_usd"] or 0.0 for r in samples),
            timing_labels=sorted({r["timing_label"] for r in samples if r["timing_label"]}),
            attempted=any(r["verdict"] != verdicts.NO_CANDIDATE for r in samples),
            first_sample_passed=any(r["sample"] == 0 and r["verdict"] == verdicts.PASS
                                    for r in samples),
            first_pass_turn=min((t for t in turns if t is not None), default=None),
            emulates=emulates,
            skipped=all(r["verdict"] in verdicts.SKIPPED for r in samples),
            tokens_known=any(r.get("prompt_tokens") is not None
                             or r.get("completion_tokens") is not None for r in samples),
            cost_known=any(r.get("cost_usd") is not None for r in samples),
        ))
    return outcomes


def generation_effort(row: Mapping[str, Any]) -> tuple[float | None, int | None]:
    """(seconds spent making the candidate, times the method ran the evaluator on the way), as
    its generation record says: an agent program's wall time and ./eval.sh runs (command), a
    model's answer latency (llm), an agent loop's turns, each evaluated (agent). None where the
    record says nothing: never guessed."""
    raw = row.get("generation")
    try:
        record = json.loads(raw) if isinstance(raw, str) else (raw or {})
    except ValueError:
        return None, None
    if not isinstance(record, dict):
        return None, None
    seconds = record.get("seconds", record.get("latency_s"))
    calls = record.get("evaluator_calls")
    if calls is None and isinstance(record.get("turns"), list):
        calls = len(record["turns"])
    number = (int, float)
    return (float(seconds) if isinstance(seconds, number) and not isinstance(seconds, bool)
            else None,
            int(calls) if isinstance(calls, int) and not isinstance(calls, bool) else None)


def _first_pass_turn(row: dict[str, Any]) -> int | None:
    """For an agent's result, the turn its first passing kernel came in."""
    raw = row.get("generation")
    if not raw:
        return None
    try:
        return json.loads(raw).get("first_pass_turn")
    except (ValueError, AttributeError):
        return None


def summarize(rows: Iterable[dict[str, Any]]) -> list[GroupSummary]:
    groups: dict[tuple[str, str, str, str], list[OperatorOutcome]] = defaultdict(list)
    for outcome in operator_outcomes(rows):
        groups[(outcome.source, outcome.method, outcome.backend, outcome.emulates)].append(outcome)
    summaries = []
    for (source, method, backend, emulates), everything in sorted(groups.items()):
        outcomes = [o for o in everything if not o.skipped]
        tried = len(outcomes)
        correct = [o for o in outcomes if o.correct]
        tokens = sum(o.tokens for o in outcomes)

        def share(count: int) -> float:
            return count / tried if tried else 0.0

        def fast(p: float) -> float:
            return share(sum(1 for o in correct if o.best_speedup and o.best_speedup > p))

        attempted = sum(1 for o in outcomes if o.attempted)
        cost = sum(o.cost_usd for o in outcomes)
        tokens_known = any(o.tokens_known for o in outcomes)
        cost_known = any(o.cost_known for o in outcomes)
        turns = [o.first_pass_turn for o in correct if o.first_pass_turn is not None]
        summaries.append(GroupSummary(
            source=source, method=method, backend=backend, operators=tried,
            correct=len(correct), correct_pct=100.0 * share(len(correct)),
            geomean_speedup=geometric_mean(o.best_speedup for o in correct),
            fast_1=fast(FAST_P[0]), fast_2=fast(FAST_P[1]), tokens=tokens,
            tokens_per_solved=tokens / len(correct) if correct and tokens_known else None,
            cost_usd=cost,
            timing_labels=sorted({label for o in outcomes for label in o.timing_labels}),
            attempted=attempted,
            tokens_per_attempted=tokens / attempted if attempted and tokens_known else None,
            cost_per_solved=cost / len(correct) if correct and cost_known else None,
            pass_at_1=share(sum(1 for o in outcomes if o.first_sample_passed)),
            pass_at_k=share(len(correct)), k=max((o.samples for o in outcomes), default=1),
            mean_turns_to_pass=sum(turns) / len(turns) if turns else None,
            emulates=emulates, skipped=len(everything) - tried,
        ))
    return summaries


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _interpreter_note(labels: Iterable[str]) -> str:
    if not all(measures_hardware(label) for label in labels):
        return ("\nnote: speedups marked * were timed in Triton's interpreter on the CPU; they "
                "measure the interpreter, not a chip, and are no performance result.")
    return ""


def _emulation_note(labels: Iterable[str]) -> str:
    emulated = sorted({label for label in labels if "(emulating " in label})
    if emulated:
        return (f"\nnote: {', '.join(emulated)}: another backend's quirks applied to Triton's "
                f"CPU interpreter (or the named host) to test the pipeline; emulation, not "
                f"results of that hardware.")
    return ""


def sandbox_counts(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many stored results ran their candidate in each sandbox (``bwrap``, ``none``); a
    verdict given before any runner started (the screen, the deny-list) counts as neither."""
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        try:
            sandbox = json.loads(row.get("detail") or "{}").get("sandbox", "")
        except ValueError:
            sandbox = ""
        if sandbox:
            counts[sandbox] += 1
    return dict(counts)


def sandbox_note(rows: Iterable[dict[str, Any]]) -> str:
    """A warning when any result's candidate ran without an OS sandbox."""
    unsandboxed = sandbox_counts(rows).get("none", 0)
    if not unsandboxed:
        return ""
    return (f"\nWARNING: {unsandboxed} result(s) ran their candidate WITHOUT an OS sandbox "
            f"(sandbox = none): a cheating candidate could have reached the harness there.")


def row_detail(row: dict[str, Any]) -> dict[str, Any]:
    """A stored result's detail (its EvalResult as a dict), or {} where the row has none."""
    return json.loads(row["detail"]) if isinstance(row.get("detail"), str) else {}


def baseline_note(rows: Iterable[dict[str, Any]]) -> str:
    """When the baselines the speedups divide were measured, how many were reused from an
    earlier candidate or run, and their drift where a stored one was re-timed
    (kgb_core/evaluation/baselines.py). Empty where nothing was timed."""
    timings = [t for row in rows for t in row_detail(row).get("timings", [])
               if t.get("reference_measured_at")]
    if not timings:
        return ""
    when = sorted(t["reference_measured_at"] for t in timings)
    reused = sum(bool(t.get("reference_reused")) for t in timings)
    line = (f"\nbaselines: {len(timings)} timed cases, {len(timings) - reused} measured for "
            f"their candidate, {reused} reused; measured from {when[0]} to {when[-1]}")
    drifts = sorted(abs(t["reference_recheck_ms"] / t["reference"]["median_ms"] - 1)
                    for t in timings
                    if t.get("reference_recheck_ms") and t["reference"].get("median_ms"))
    if drifts:
        line += (f"; {len(drifts)} stored ones re-timed: median drift "
                 f"{100 * drifts[len(drifts) // 2]:.1f} %, largest {100 * drifts[-1]:.1f} %")
    return line


def render_summary(summaries: Sequence[GroupSummary]) -> str:
    rows = []
    for s in summaries:
        star = "" if all(measures_hardware(label) for label in s.timing_labels) else "*"
        rows.append([s.source, s.method, s.backend_label, s.operators, s.skipped,
                     f"{s.correct_pct:.1f}" if s.operators else "-",
                     f"{s.pass_at_1:.2f}", f"{s.pass_at_k:.2f} (k={s.k})",
                     (_fmt(s.geomean_speedup) + star) if s.geomean_speedup else "-",
                     f"{s.fast_1:.2f}", f"{s.fast_2:.2f}", s.tokens,
                     _fmt(s.tokens_per_attempted), _fmt(s.tokens_per_solved),
                     f"{s.cost_usd:.4f}", _fmt(s.cost_per_solved), _fmt(s.mean_turns_to_pass)])
    table = render_table(["source", "method", "backend", "ops", "skipped", "correct%", "pass@1",
                          "pass@k",
                          "speedup(geo)", "fast_1", "fast_2", "tokens", "tokens/attempted",
                          "tokens/solved", "cost$", "cost$/solved", "turns to pass"], rows)
    return (table + _interpreter_note(label for s in summaries for label in s.timing_labels)
            + _emulation_note(s.backend_label for s in summaries))


def render_results(rows: Sequence[dict[str, Any]]) -> str:
    """One line per stored result: the table ``kgb run`` prints at the end of a sweep.

    Speedups timed in the interpreter carry a *, and emulated results are named
    ``cpu (emulating amd)``; the summary printed after it explains both.
    """
    table_rows = []
    for row in rows:
        cases = row_detail(row).get("cases", [])
        checked = [c for c in cases if c.get("status") != "skipped"]
        passed = sum(1 for c in checked if c.get("status") == verdicts.PASS)
        skipped = len(cases) - len(checked)
        max_rel = max((c.get("max_rel_error", 0.0) or 0.0 for c in checked), default=None)
        label = row.get("timing_label") or ""
        star = "*" if label and not measures_hardware(label) else ""
        table_rows.append([
            row["op"], method_label(row), backend_label(row["backend"], row.get("emulates")),
            row["sample"], row["verdict"],
            ("-" if row["verdict"] in verdicts.SKIPPED and not checked else
             f"{passed}/{len(checked)}" + (f" (+{skipped} skipped)" if skipped else "")),
            max_rel, row["candidate_ms"], row["reference_ms"],
            (_fmt(row["speedup"]) + star) if row["speedup"] else "-",
        ])
    table = render_table(["op", "method", "backend", "sample", "verdict", "trials passed",
                          "max rel err", "cand ms", "ref ms", "speedup"], table_rows)
    return table
