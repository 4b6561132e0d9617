"""The leaderboard: one row per method label and backend, the report's first view.

A method is a label (``llm/gpt-4o``, ``command/claude``: kgb_core/labels.py), so models and
agents run through one plugin each get a row. Each row has the numbers over every operator it
tried ("all") and per source: correct %, pass@1 and pass@k, fast_1, the geomean speedup of its
correct operators, tokens and dollars per solved operator. The numbers are the summary's
(``kgb_core.report.summarize``), computed once per source and once over all sources, so the
leaderboard never disagrees with the other views. Rows are ranked by correct % over all, then
fast_1, then geomean speedup.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from kgb_core.backends import backend_label
from kgb_core.report import GroupSummary, backend_kinds, summarize

ALL = "all"


@dataclass
class LeaderboardCell:
    """One method's numbers over a set of operators (one source, or all)."""

    operators: int
    correct: int
    correct_pct: float | None
    pass_at_1: float | None
    pass_at_k: float | None
    k: int
    fast_1: float | None
    speedup_geomean: float | None
    tokens_per_solved: float | None
    cost_per_solved: float | None

    @classmethod
    def of(cls, summary: GroupSummary) -> "LeaderboardCell":
        """The summary's numbers; fast_1 unknown (not 0) where nothing was timed."""
        tried = summary.operators
        timed = bool(summary.timing_labels)
        return cls(operators=tried, correct=summary.correct,
                   correct_pct=summary.correct_pct if tried else None,
                   pass_at_1=summary.pass_at_1 if tried else None,
                   pass_at_k=summary.pass_at_k if tried else None, k=summary.k,
                   fast_1=summary.fast_1 if tried and timed else None,
                   speedup_geomean=summary.geomean_speedup,
                   tokens_per_solved=summary.tokens_per_solved,
                   cost_per_solved=summary.cost_per_solved)


@dataclass
class LeaderboardRow:
    rank: int
    method: str      # the label
    backend: str     # with "(emulating X)" where it was emulation
    kind: str        # hardware, interpreter or emulation: whether speedups mean anything
    all: LeaderboardCell
    sources: dict[str, LeaderboardCell] = field(default_factory=dict)


def leaderboard(rows: Iterable[dict[str, Any]]) -> list[LeaderboardRow]:
    """The ranked rows from stored result rows (the latest per key)."""
    rows = list(rows)
    kinds = backend_kinds(rows)
    per_source: dict[tuple[str, str, str], dict[str, LeaderboardCell]] = defaultdict(dict)
    for summary in summarize(rows):
        key = (summary.method, summary.backend, summary.emulates)
        per_source[key][summary.source] = LeaderboardCell.of(summary)
    overall = {(s.method, s.backend, s.emulates): LeaderboardCell.of(s)
               for s in summarize({**row, "source": ALL} for row in rows)}
    board = [LeaderboardRow(rank=0, method=method, backend=backend_label(backend, emulates),
                            kind=kinds[(backend, emulates)], all=cell,
                            sources=dict(sorted(per_source[(method, backend, emulates)].items())))
             for (method, backend, emulates), cell in overall.items()]

    def order(row: LeaderboardRow) -> tuple:
        cell = row.all
        return (-(cell.correct_pct or 0.0), -(cell.fast_1 or 0.0),
                -(cell.speedup_geomean or 0.0), row.method, row.backend)

    board.sort(key=order)
    for rank, row in enumerate(board, start=1):
        row.rank = rank
    return board


def sources_of(board: Iterable[LeaderboardRow]) -> list[str]:
    """Every source some row has numbers for, in name order."""
    return sorted({source for row in board for source in row.sources})
