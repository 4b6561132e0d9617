"""The report as CSV: one file per table in a directory, values unrounded (for pandas,
spreadsheets), the fast_p curve's points included."""

from __future__ import annotations

import csv
from pathlib import Path

from kgb_core.reports.tables import all_tables
from kgb_core.reports.views import ReportData


def write_csv(report: ReportData, directory: str | Path) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for table in all_tables(report):
        path = directory / f"{table.name}.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(table.headers)
            for row in table.rows:
                writer.writerow(["" if value is None else value for value in row])
        written.append(path)
    return written
