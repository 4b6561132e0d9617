"""The report as Markdown: the same tables as the HTML (pipe tables), without the plots."""

from __future__ import annotations

from kgb_core.reports.tables import Table, formatted, sections
from kgb_core.reports.views import ReportData


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_md(table: Table) -> str:
    lines = [f"### {table.title}", ""]
    if table.rows:
        lines.append("| " + " | ".join(_cell(h) for h in table.headers) + " |")
        lines.append("|" + "|".join("---" for _ in table.headers) + "|")
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in formatted(table)]
    else:
        lines.append("(no rows)")
    if table.note:
        lines += ["", f"_{table.note}_"]
    return "\n".join(lines)


def render_md(report: ReportData, html_name: str | None = None) -> str:
    out = [f"# {report.title}", "",
           f"Generated {report.generated_at} by `kgb report` from {len(report.runs)} run(s), "
           f"{len(report.operators)} operator result(s)."]
    if html_name:
        out.append(f"The plots (fast_p curve, speedup distribution, transfer matrices, cost, "
                   f"roofline) are in [{html_name}]({html_name}).")
    for note in report.notes:
        out += ["", f"> **Note:** {note}"]
    for title, tables in sections(report):
        out += ["", f"## {title}"]
        for table in tables:
            out += ["", table_md(table)]
    return "\n".join(out) + "\n"
