"""The report as one self-contained HTML file: inline CSS, tables, plots as base64 PNGs, and
one small inline script (table_script.js) that sorts every table by a click on a header and
filters the leaderboard and the per-operator table.

No external URL (no font, stylesheet, script or CDN): it opens offline, from a mail attachment
or a CI artefact, and renders the same everywhere; without JavaScript the tables read as they
are, in the report's order.
"""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path
from typing import Mapping

from kgb_core.reports.plots import MISSING_NOTE
from kgb_core.reports.tables import Table, formatted, sections
from kgb_core.reports.views import ReportData

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em;
       color: #1d1d1f; max-width: 1400px; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; font-size: 0.82em; margin: 0.6em 0; }
th, td { border: 1px solid #d0d0d0; padding: 3px 7px; text-align: right; }
th { background: #f0f2f5; text-align: center; }
td.text { text-align: left; white-space: nowrap; }
tr:nth-child(even) td { background: #fafafa; }
.note { color: #555; font-size: 0.85em; max-width: 1000px; }
.warn { background: #fff4e5; border-left: 4px solid #f0a030; padding: 0.5em 0.8em;
        max-width: 1000px; }
.kind-interpreter, .kind-emulation { color: #a05a00; font-style: italic; }
img.plot { max-width: 100%; display: block; margin: 0.8em 0; border: 1px solid #eee; }
details pre { background: #f6f8fa; padding: 0.6em; overflow-x: auto; font-size: 0.8em; }
nav a { margin-right: 1em; }
.scroll { overflow-x: auto; max-width: 100%; }
table.sortable th { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
.filters { margin: 0.4em 0; font-size: 0.85em; }
.filters select, .filters input { margin-right: 0.6em; }
"""
# Read once: it goes inline into every report (no file beside the HTML to lose).
_SCRIPT = (Path(__file__).with_name("table_script.js")).read_text()

_PLOTS_OF_SECTION = {
    "MS view": ("correct", "fast_p_curve", "speedups"),
    "MC view": ("transfer_",),
    "Cost": ("cost",),
    "Per operator": ("roofline",),
}


def _anchor(title: str) -> str:
    return title.lower().replace(" ", "-")


def table_html(table: Table) -> str:
    kinds = table.formats or ["num"] * len(table.headers)
    head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
    body = []
    for raw, shown in zip(table.rows, formatted(table)):
        cells = []
        for i, value in enumerate(shown):
            css = ["text"] if kinds[i] == "text" else []
            if table.headers[i] == "kind" and raw[i] in ("interpreter", "emulation"):
                css.append(f"kind-{raw[i]}")
            cls = f' class="{" ".join(css)}"' if css else ""
            # The raw number, for sorting: the shown one is rounded ("1.2e+03", "n/a").
            data = (f' data-v="{raw[i]!r}"' if isinstance(raw[i], (int, float))
                    and not isinstance(raw[i], bool) and kinds[i] != "text" else "")
            cells.append(f"<td{cls}{data}>{escape(value)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    parts = [f'<h3 id="t-{escape(table.name)}">{escape(table.title)}</h3>']
    if table.rows:
        filters = (f' data-filter="{escape(",".join(table.filters))}"' if table.filters
                   else "")
        parts.append(f'<div class="scroll"><table id="table-{escape(table.name)}" '
                     f'class="sortable"{filters}><thead><tr>{head}</tr></thead>'
                     f'<tbody>{"".join(body)}</tbody></table></div>')
    else:
        parts.append('<p class="note">(no rows)</p>')
    if table.note:
        parts.append(f'<p class="note">{escape(table.note)}</p>')
    return "\n".join(parts)


def _plot_html(name: str, png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f'<img class="plot" id="plot-{escape(name)}" alt="{escape(name)} plot" '
            f'src="data:image/png;base64,{data}">')


def _best_sources(report: ReportData) -> str:
    shown = [r for r in report.operators if r.best_source and not r.trusted]
    if not shown:
        return ""
    parts = ["<h3>Best candidates (generated, not the shipped kernels)</h3>"]
    for r in shown:
        parts.append(f"<details><summary>{escape(r.op)} ({escape(r.method)}, "
                     f"{escape(r.backend)}, sample {r.best_sample})</summary>"
                     f"<pre>{escape(r.best_source or '')}</pre></details>")
    return "\n".join(parts)


def render_html(report: ReportData, plots: Mapping[str, bytes] | None,
                plots_note: str = MISSING_NOTE) -> str:
    """``plots`` is None when matplotlib is missing: the tables still render, with a line
    saying what the plots need."""
    out: list[str] = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(report.title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(report.title)}</h1>",
        f'<p class="note">Generated {escape(report.generated_at)} by <code>kgb report</code> '
        f"from {len(report.runs)} run(s), {len(report.operators)} operator result(s).</p>",
    ]
    ordered = sections(report)
    out.append("<nav>" + "".join(f'<a href="#{_anchor(title)}">{escape(title)}</a>'
                                 for title, _ in ordered) + "</nav>")
    for note in report.notes:
        out.append(f'<p class="warn">{escape(note)}</p>')
    if plots is None:
        out.append(f'<p class="warn" id="plots-missing">{escape(plots_note)}</p>')
    for title, tables in ordered:
        out.append(f'<h2 id="{_anchor(title)}">{escape(title)}</h2>')
        if plots:
            for prefix in _PLOTS_OF_SECTION.get(title, ()):
                for name, png in plots.items():
                    if name == prefix or (prefix.endswith("_") and name.startswith(prefix)):
                        out.append(_plot_html(name, png))
        for table in tables:
            out.append(table_html(table))
        if title == "Per operator":
            out.append(_best_sources(report))
    out.append(f"<script>\n{_SCRIPT}</script>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"

