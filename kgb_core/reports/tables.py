"""Each view as a table: headers and raw values, shared by the Markdown, HTML and CSV writers,
so every format shows the same numbers (CSV keeps them unrounded, the others format them)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from kgb_core.calibration import format_peak
from kgb_core.labels import file_stem
from kgb_core.report import render_table
from kgb_core.reports.leaderboard import ALL, LeaderboardRow, sources_of
from kgb_core.reports.views import FAST_P_THRESHOLDS, ReportData


@dataclass
class Table:
    name: str          # file stem for CSV, anchor for HTML
    title: str
    headers: list[str]
    rows: list[list[Any]]
    note: str = ""
    # Per column, how a value is shown: "pct" (already a percentage), "share" (0..1 shown as
    # a percentage), "x" (a ratio), "ms", "int", "usd", "text", "num".
    formats: list[str] = field(default_factory=list)
    # Columns the HTML offers a drop-down filter on (with a free-text filter): for tables too
    # long to read whole, the leaderboard and the per-operator table.
    filters: list[str] = field(default_factory=list)


def fmt(value: Any, kind: str = "num") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a" if kind in ("pct", "roofline") else "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "pct" or kind == "roofline":
        return f"{value:.1f}"
    if kind == "share":
        return f"{100.0 * value:.1f}"
    if kind == "x":
        return f"{value:.3g}"
    if kind == "ms":
        return f"{value:.4g}"
    if kind == "usd":
        return f"{value:.4f}"
    if kind == "int":
        return str(int(value))
    if kind == "tokens":
        return f"{value:.0f}" if isinstance(value, (int, float)) else str(value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def formatted(table: Table) -> list[list[str]]:
    kinds = table.formats or ["num"] * len(table.headers)
    return [[fmt(value, kinds[i]) for i, value in enumerate(row)] for row in table.rows]


# Per set of operators (all, or one source): header suffix, format, the cell's attribute.
_LEADERBOARD_COLUMNS = (("ops", "int", "operators"), ("correct %", "pct", "correct_pct"),
                        ("pass@1 %", "share", "pass_at_1"), ("pass@k %", "share", "pass_at_k"),
                        ("fast_1 %", "share", "fast_1"), ("speedup", "x", "speedup_geomean"),
                        ("tokens/solved", "tokens", "tokens_per_solved"),
                        ("$/solved", "usd", "cost_per_solved"))


def leaderboard_table(report: ReportData) -> Table:
    sources = sources_of(report.leaderboard)
    headers = ["rank", "method", "backend", "kind", "k"]
    formats = ["int", "text", "text", "text", "int"]
    for scope in (ALL, *sources):
        headers += [f"{scope} {name}" for name, _, _ in _LEADERBOARD_COLUMNS]
        formats += [kind for _, kind, _ in _LEADERBOARD_COLUMNS]
    rows = []
    for r in report.leaderboard:
        row: list[Any] = [r.rank, r.method, r.backend, r.kind, r.all.k]
        for cell in (r.all, *(r.sources.get(source) for source in sources)):
            row += [getattr(cell, attribute) if cell else None
                    for _, _, attribute in _LEADERBOARD_COLUMNS]
        rows.append(row)
    return Table(
        name="leaderboard", title="Leaderboard: per method and backend", headers=headers,
        formats=formats, rows=rows, filters=["method", "backend", "kind"],
        note="A method is a label: the plugin and the model, agent or submission it ran "
             "([method] label overrides it). Ranked by correct % over all operators tried, then "
             "fast_1, then geomean speedup. pass@k with k candidates per operator (the row's "
             "largest); speedup: geomean over the correct, timed operators; tokens and "
             "dollars per solved operator count every attempt. Rows of kind interpreter or "
             "emulation were timed in Triton's CPU interpreter: their speedups are no "
             "performance result.")


def leaderboard_text(board: Sequence[LeaderboardRow]) -> str:
    """The leaderboard over all sources for a terminal (the summary below it is per source)."""
    columns = _LEADERBOARD_COLUMNS
    table = Table(name="leaderboard", title="", formats=["int", "text", "text", "text", "int"]
                  + [kind for _, kind, _ in columns],
                  headers=["rank", "method", "backend", "kind", "k"] + [n for n, _, _ in columns],
                  rows=[[r.rank, r.method, r.backend, r.kind, r.all.k]
                        + [getattr(r.all, attribute) for _, _, attribute in columns]
                        for r in board])
    return render_table(table.headers, formatted(table))


def ms_table(report: ReportData) -> Table:
    fast_headers = [f"fast_{p:g} %" for p in FAST_P_THRESHOLDS]
    rows = []
    for r in report.ms:
        fast = [r.fast_p[f"{p:g}"] if r.fast_p else None for p in FAST_P_THRESHOLDS]
        rows.append([r.source, r.method, r.backend, r.kind, r.operators, r.skipped,
                     r.compile_rate, r.correct, r.correct_pct, r.timed, r.speedup_geomean,
                     r.speedup_min, r.speedup_median, r.speedup_max, *fast])
    return Table(
        name="ms", title="MS view: per source, method and backend",
        headers=["source", "method", "backend", "kind", "ops", "skipped", "compile %",
                 "correct", "correct %", "timed", "speedup geomean", "speedup min",
                 "speedup median", "speedup max", *fast_headers],
        formats=["text", "text", "text", "text", "int", "int", "share", "int", "pct", "int",
                 "x", "x", "x", "x"] + ["share"] * len(FAST_P_THRESHOLDS),
        rows=rows,
        note="fast_p: share of the operators tried that are correct and more than p times "
             "faster than the baseline (fast_0: correct and timed). '-' where nothing was "
             "timed.")


def speedup_distribution_table(report: ReportData) -> Table:
    return Table(
        name="speedups", title="Speedup distribution of the correct operators",
        headers=["group", "kind", "n", "min", "p25", "median", "p75", "max"],
        formats=["text", "text", "int", "x", "x", "x", "x", "x"],
        rows=[[r.group, r.kind, r.timed, r.speedup_min, r.speedup_p25, r.speedup_median,
               r.speedup_p75, r.speedup_max] for r in report.ms if r.timed])


def fast_p_curve_table(report: ReportData) -> Table:
    rows = [[curve.group, curve.kind, p, share] for curve in report.fast_p_curves
            for p, share in curve.points]
    return Table(name="fast_p_curve", title="fast_p curve", headers=["group", "kind", "p",
                                                                       "fast_p"],
                 formats=["text", "text", "num", "share"], rows=rows)


def mc_table(report: ReportData) -> Table:
    return Table(
        name="mc", title="MC view: the cross-chip operators (ATen's mc110) per backend and method",
        headers=["method", "backend", "kind", "ops", "skipped", "correct", "correct %",
                 "speedup geomean", "fast_1 %"],
        formats=["text", "text", "text", "int", "int", "int", "pct", "x", "share"],
        rows=[[r.method, r.backend, r.kind, r.operators, r.skipped, r.correct, r.correct_pct,
               r.speedup_geomean, r.fast_1] for r in report.mc],
        note=report.mc_note)


def transfer_tables(report: ReportData) -> list[Table]:
    tables = []
    for matrix in report.transfer:
        names = matrix.backends
        heads = [f"{n} [{matrix.kinds[n]}]" if matrix.kinds[n] != "hardware" else n
                 for n in names]
        rows = []
        for a, head in zip(names, heads):
            row: list[Any] = [head]
            for b in names:
                cell = matrix.cells[a][b]
                row.append(cell["share"])
            rows.append(row)
        tables.append(Table(
            name=f"transfer_{file_stem(matrix.method)}",
            title=f"Transfer matrix, method {matrix.method}",
            headers=["solved on \\ also solved on", *heads],
            formats=["text"] + ["share"] * len(names), rows=rows,
            note="Row A, column B: of the cross-chip operators solved on A and tried on B, the "
                 "share (%) also solved on B."))
    return tables


def cost_table(report: ReportData) -> Table:
    return Table(
        name="cost", title="Cost per method",
        headers=["method", "backend", "kind", "ops", "attempted", "solved", "samples",
                 "prompt tokens", "completion tokens", "tokens", "cost $",
                 "tokens / attempted", "tokens / solved", "$ / attempted", "$ / solved",
                 "generation s", "generation s / solved", "evaluator calls",
                 "evaluator calls / solved"],
        formats=["text", "text", "text", "int", "int", "int", "int", "int", "int", "int",
                 "usd", "tokens", "tokens", "usd", "usd", "num", "num", "int", "num"],
        rows=[[r.method, r.backend, r.kind, r.operators, r.attempted, r.solved, r.samples,
               r.prompt_tokens, r.completion_tokens, r.tokens, r.cost_usd,
               r.tokens_per_attempted, r.tokens_per_solved, r.cost_per_attempted,
               r.cost_per_solved, r.generation_s, r.generation_s_per_solved,
               r.evaluator_calls, r.evaluator_calls_per_solved] for r in report.cost],
        note="generation s: the time spent making the candidates (an agent program's wall "
             "time, a model's answer latency); evaluator calls: the agent's own runs of the "
             "evaluator (./eval.sh, or an agent loop's evaluated turns). '-' where the method "
             "records neither.")


def operator_table(report: ReportData) -> Table:
    return Table(
        name="operators", title="Per operator",
        headers=["op", "source", "method", "backend", "kind", "verdicts", "correct",
                 "best sample", "speedup", "cand ms", "ref ms", "roofline %",
                 "baseline roofline %", "bound", "roofline note", "timer"],
        formats=["text", "text", "text", "text", "text", "text", "text", "int", "x", "ms", "ms",
                 "roofline", "roofline", "text", "text", "text"],
        filters=["method", "source", "backend", "verdicts"],
        rows=[[r.op, r.source, r.method, r.backend, r.kind, r.verdicts,
               "skipped" if r.skipped else r.correct, r.best_sample,
               r.speedup, r.candidate_ms, r.reference_ms, r.roofline_pct,
               r.reference_roofline_pct, r.bound, r.roofline_note, r.timing_label]
              for r in report.operators],
        note="roofline %: the time the device's calibrated peaks allow, max(FLOPs / matmul "
             "peak, bytes / copy bandwidth), over the measured median, geometric mean over the "
             "timed cases.")


def peaks_table(report: ReportData) -> Table:
    rows = []
    for device, metrics in sorted(report.peaks.items()):
        for metric, entry in sorted(metrics.items()):
            rows.append([device, metric, format_peak(metric, entry["value"]), entry["value"],
                         entry["timer_label"], entry["created_at"]])
    return Table(name="peaks", title="Device peaks (kgb calibrate)",
                 headers=["device", "metric", "peak", "value (B/s or FLOP/s)", "timer",
                          "measured"],
                 formats=["text", "text", "text", "num", "text", "text"], rows=rows,
                 note="" if rows else "no peaks stored: run `kgb calibrate --db <this store>` "
                                      "on the device to get roofline %")


def runs_table(report: ReportData) -> Table:
    return Table(name="runs", title="Runs",
                 headers=["run", "created", "method", "backend", "emulates", "ops", "device",
                          "commit", "torch", "triton"],
                 formats=["int"] + ["text"] * 4 + ["int"] + ["text"] * 4,
                 rows=[[r["id"], r["created_at"], r["method"], r["backend"], r["emulates"],
                        r["operators"], r["device_name"], r["commit"], r["torch"], r["triton"]]
                       for r in report.runs])


def all_tables(report: ReportData) -> list[Table]:
    return [leaderboard_table(report), ms_table(report), speedup_distribution_table(report), mc_table(report),
            *transfer_tables(report), cost_table(report), operator_table(report),
            peaks_table(report), runs_table(report), fast_p_curve_table(report)]


def sections(report: ReportData) -> list[tuple[str, Sequence[Table]]]:
    """The report's sections in order, as the HTML and Markdown writers lay them out (the
    fast_p curve's points go to CSV and JSON; HTML and Markdown show it as a plot)."""
    return [
        ("Leaderboard", [leaderboard_table(report)]),
        ("MS view", [ms_table(report), speedup_distribution_table(report)]),
        ("MC view", [mc_table(report), *transfer_tables(report)]),
        ("Cost", [cost_table(report)]),
        ("Per operator", [operator_table(report)]),
        ("Provenance", [peaks_table(report), runs_table(report)]),
    ]
