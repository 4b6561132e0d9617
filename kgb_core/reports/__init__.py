"""Report views (MS, MC, cost, per operator with roofline %) and their writers.

``load_report(db)`` reads a result store into a ``ReportData``; ``write_html``, ``write_md``
and ``write_csv`` put it on disk. ``kgb_core.report`` keeps the one-table text summary that
``kgb run`` and ``kgb report`` print.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgb_core.reports.views import ReportData, build_report, operator_facts


def load_report(store: Any, registry: Any, run_id: int | None = None,
                title: str = "kgb report", generated_at: str | None = None) -> ReportData:
    rows = store.results(run_id)
    used = {row["run_id"] for row in rows}
    runs = [run for run in store.runs() if run["id"] in used]
    facts = operator_facts(registry, {row["op"] for row in rows})
    return build_report(rows, runs, store.peaks(), facts, title=title,
                        generated_at=generated_at)


def render_plots(report: ReportData) -> dict[str, bytes] | None:
    """Every plot, or None when matplotlib is not installed (the HTML then says so)."""
    from kgb_core.reports.plots import make_plots

    try:
        return make_plots(report)
    except ImportError:
        return None


def write_html(report: ReportData, path: str | Path) -> Path:
    from kgb_core.reports.render_html import render_html

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(report, render_plots(report)), encoding="utf-8")
    return path


def write_md(report: ReportData, path: str | Path, html_name: str | None = None) -> Path:
    from kgb_core.reports.render_md import render_md

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_md(report, html_name), encoding="utf-8")
    return path


def write_csv(report: ReportData, directory: str | Path) -> list[Path]:
    from kgb_core.reports.render_csv import write_csv as _write

    return _write(report, directory)


__all__ = ["ReportData", "build_report", "load_report", "operator_facts", "render_plots",
           "write_csv", "write_html", "write_md"]
