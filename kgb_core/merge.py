"""``kgb merge a.db b.db ... -o all.db``: one store from the stores of several machines.

Each vendor's machine writes its own store; the merged one holds every run (with the
environment it ran in) and every result, so that ``kgb report`` shows all chips side by side.
The merge is idempotent: merging the same stores again, or stores that overlap (a copy taken
mid-run, a store merged before), adds nothing twice.

Identity and conflict rules:

- A run is identified by its ``uid`` (made when the run starts and kept in every copy; runs
  from stores older than schema 4 get one derived from their creation time, plan and
  environment, the same in every copy). Runs of different uids are different runs, even with
  the same plan: both are kept.
- The same run uid in two stores must have the same plan and environment, or the merge stops
  (a corrupt or hand-edited store). Its ``finished_at`` is the later one known (a copy taken
  mid-run is unfinished; the original finished).
- A run's method label (kgb_core/labels.py) is its own in every copy: derived from its plan
  where a store older than schema 5 has none.
- A result is identified by (run uid, op, backend, method, sample); its label is its run's.
  The same identity with the
  same content (verdict, message, timings, detail, candidate source, tokens, generation,
  created_at) is one row. The same identity with different content is a conflict (two
  machines resumed one run): the merge stops and writes nothing, unless ``--prefer newer``
  (the row recorded later, by ``created_at``, wins; on a tie, the input named later) or
  ``--prefer older`` (the row recorded first wins; on a tie, the one already there) says
  how to settle it.
- Answer-cache rows (``responses``) are keyed by the hash of their request; the first met is
  kept.
- Calibrations (``device_peaks``, from ``kgb calibrate``) are kept whole: a measurement already
  in the output (same device, metric, value, timer and time) is not added again, and new ones
  are added oldest first, so the report's "latest peak per device and metric" is the newest
  across machines.
- New runs and results are written in the order they were recorded (``created_at``), so that
  the report's "latest result per key" (by ``created_at``) picks the newest across machines.

Inputs are opened read-only and never changed; the output is written in one transaction, so a
merge that stops leaves it as it was. An existing output is merged into, not replaced.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from kgb_core.errors import UserError
from kgb_core.labels import plan_label
from kgb_core.store import (SCHEMA_VERSION, ResultStore, content_columns, foreign_objects,
                            legacy_run_uid, refusal)

PREFER = ("error", "newer", "older")
# Columns of a result row that make its content (everything but where it sits: id, run_id).
_CONTENT = content_columns("results")


@dataclass
class MergeReport:
    inputs: list[str]
    output: str
    runs_added: int = 0
    runs_known: int = 0
    results_added: int = 0
    results_known: int = 0
    results_replaced: int = 0
    responses_added: int = 0
    peaks_added: int = 0
    conflicts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _content_hash(row: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps([row.get(c) for c in _CONTENT], default=str)
                          .encode()).hexdigest()


def _open_input(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise UserError(f"kgb merge: no result store at {path}")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.DatabaseError as error:
        raise UserError(f"kgb merge: {path} is not a kgb result store ({error})") from None
    found = foreign_objects(conn)
    if found:
        conn.close()
        raise UserError("kgb merge: " + refusal(path, found))
    if row is None or int(row["value"]) > SCHEMA_VERSION:
        conn.close()
        raise UserError(f"kgb merge: {path} has store schema "
                        f"{row['value'] if row else 'unknown'}; this kgb reads "
                        f"{SCHEMA_VERSION} and older")
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r["name"] for r in conn.execute(f"PRAGMA table_info({table})")}


@dataclass
class _Store:
    """One input store's rows, read before anything is written."""
    path: Path
    runs: list[dict[str, Any]]
    results: list[dict[str, Any]]
    responses: list[dict[str, Any]]
    peaks: list[dict[str, Any]]


# Columns of a device_peaks row that make one measurement (all but its id).
_PEAK_CONTENT = content_columns("device_peaks")


def _read(path: Path) -> _Store:
    """Runs (with uid), results (with their run's uid), responses and calibrations of one
    store, read-only; columns and tables an older schema lacks read as their defaults."""
    conn = _open_input(path)
    try:
        run_columns = _columns(conn, "runs")
        runs = [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY id")]
        for run in runs:
            if "uid" not in run_columns or not run.get("uid"):
                run["uid"] = legacy_run_uid(run["created_at"], run["plan_key"],
                                            run["environment"])
            if not run.get("label"):
                run["label"] = plan_label(json.loads(run["plan"]))
        uid_of = {run["id"]: run["uid"] for run in runs}
        label_of = {run["id"]: run["label"] for run in runs}
        result_columns = _columns(conn, "results")
        results = []
        for r in conn.execute("SELECT * FROM results ORDER BY id"):
            row = dict(r)
            for column, default in (("generation", None), ("emulates", "")):
                if column not in result_columns:
                    row[column] = default
            row["label"] = row.get("label") or label_of[row["run_id"]]
            row["run_uid"] = uid_of[row["run_id"]]
            results.append(row)
        responses = [dict(r) for r in conn.execute("SELECT * FROM responses ORDER BY key")]
        has_peaks = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' "
                                 "AND name='device_peaks'").fetchone()
        peaks = [dict(r) for r in conn.execute("SELECT * FROM device_peaks ORDER BY id")] \
            if has_peaks else []
    finally:
        conn.close()
    return _Store(path, runs, results, responses, peaks)


def merge_stores(inputs: Sequence[str | Path], output: str | Path,
                 prefer: str = "error") -> MergeReport:
    if prefer not in PREFER:
        raise UserError(f"kgb merge: --prefer must be one of {', '.join(PREFER)}")
    if not inputs:
        raise UserError("kgb merge: name at least one store to merge")
    output = Path(output)
    paths = [Path(p) for p in inputs]
    for path in paths:
        if output.exists() and path.exists() and path.resolve() == output.resolve():
            raise UserError(f"kgb merge: {path} is also the output; an existing output is "
                            f"merged into already, leave it out of the inputs")
    read = [_read(path) for path in paths]  # every input readable before any write
    report = MergeReport(inputs=[str(p) for p in paths], output=str(output))
    existed = output.exists()
    try:
        _write(output, read, prefer, report)
    except BaseException:
        if not existed:  # leave no empty store behind a merge that stopped
            for suffix in ("", "-wal", "-shm"):
                Path(str(output) + suffix).unlink(missing_ok=True)
        raise
    return report


def _write(output: Path, read: list[_Store], prefer: str,
           report: MergeReport) -> None:
    with ResultStore(output) as store:
        conn = store._conn
        with store._transaction():
            _merge_into(conn, read, prefer, report)
            if report.conflicts and prefer == "error":
                raise _Conflicts(report)
            if not (report.runs_added or report.results_added or report.results_replaced
                    or report.responses_added or report.peaks_added):
                return  # nothing new: the store stays byte for byte what it was
            log = json.loads((conn.execute("SELECT value FROM meta WHERE key='merged_from'")
                              .fetchone() or ['[]'])[0])
            log.append({"inputs": report.inputs, "runs_added": report.runs_added,
                        "results_added": report.results_added,
                        "results_replaced": report.results_replaced})
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('merged_from', ?)",
                         (json.dumps(log),))


class _Conflicts(UserError):
    def __init__(self, report: MergeReport) -> None:
        shown = "; ".join(report.conflicts[:3])
        more = f" (and {len(report.conflicts) - 3} more)" if len(report.conflicts) > 3 else ""
        super().__init__(f"kgb merge: {len(report.conflicts)} result(s) differ between the "
                         f"stores for the same run and key: {shown}{more}; nothing was "
                         f"written. Choose with --prefer newer or --prefer older")
        self.report = report


def _merge_into(conn: sqlite3.Connection, read: list[_Store],
                prefer: str, report: MergeReport) -> None:
    # -- runs --------------------------------------------------------------------------------
    run_id_of: dict[str, int] = {}
    for row in conn.execute("SELECT id, uid, plan_key, environment, finished_at FROM runs"):
        run_id_of[row["uid"]] = row["id"]
    incoming = sorted(((run["created_at"], index, run["id"], run)
                       for index, store in enumerate(read) for run in store.runs),
                      key=lambda item: item[:3])
    for _, index, _, run in incoming:
        where = read[index].path
        known = conn.execute("SELECT id, plan_key, environment, finished_at FROM runs "
                             "WHERE uid=?", (run["uid"],)).fetchone()
        if known is not None:
            if known["plan_key"] != run["plan_key"] or \
                    json.loads(known["environment"]) != json.loads(run["environment"]):
                raise UserError(f"kgb merge: run {run['uid']} in {where} has another plan or "
                                f"environment than the run of that uid already merged; one of "
                                f"the stores was changed by hand")
            if run["finished_at"] and (known["finished_at"] or "") < run["finished_at"]:
                conn.execute("UPDATE runs SET finished_at=? WHERE id=?",
                             (run["finished_at"], known["id"]))
            report.runs_known += 1
            continue
        cursor = conn.execute(
            "INSERT INTO runs(created_at, finished_at, plan_key, plan, environment, uid, label) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run["created_at"], run["finished_at"], run["plan_key"], run["plan"],
             run["environment"], run["uid"], run["label"]))
        run_id_of[run["uid"]] = int(cursor.lastrowid)
        report.runs_added += 1

    # -- results -----------------------------------------------------------------------------
    incoming_results = sorted(((row["created_at"], index, row["id"], row)
                               for index, store in enumerate(read)
                               for row in store.results), key=lambda item: item[:3])
    for _, index, _, row in incoming_results:
        run_id = run_id_of[row["run_uid"]]
        key = (run_id, row["op"], row["backend"], row["method"], row["sample"])
        existing = conn.execute(
            "SELECT * FROM results WHERE run_id=? AND op=? AND backend=? AND method=? "
            "AND sample=?", key).fetchone()
        if existing is not None:
            if _content_hash(dict(existing)) == _content_hash(row):
                report.results_known += 1
                continue
            report.conflicts.append(
                f"{row['op']} {row['backend']} {row['method']} sample {row['sample']} of run "
                f"{row['run_uid'][:12]}: {existing['verdict']} already, {row['verdict']} in "
                f"{read[index].path}")
            incoming_newer = row["created_at"] >= existing["created_at"]
            # newer: replace when the incoming row is as new or newer (ties: the later input);
            # older: replace only when it is strictly older.
            if prefer == "error" or (prefer == "newer") != incoming_newer:
                continue
            conn.execute("DELETE FROM results WHERE id=?", (existing["id"],))
            report.results_replaced += 1
        else:
            report.results_added += 1
        columns = ("run_id",) + _CONTENT
        conn.execute(f"INSERT INTO results({', '.join(columns)}) "
                     f"VALUES ({', '.join('?' for _ in columns)})",
                     (run_id, *[row.get(c) for c in _CONTENT]))

    # -- the answer cache --------------------------------------------------------------------
    for store in read:
        for response in store.responses:
            cursor = conn.execute("INSERT OR IGNORE INTO responses(key, value, created_at) "
                                  "VALUES (?, ?, ?)",
                                  (response["key"], response["value"], response["created_at"]))
            report.responses_added += cursor.rowcount

    # -- calibrations ------------------------------------------------------------------------
    known_peaks = {tuple(row[c] for c in _PEAK_CONTENT)
                   for row in conn.execute("SELECT * FROM device_peaks")}
    incoming_peaks = sorted(((peak["created_at"], index, peak["id"], peak)
                             for index, store in enumerate(read) for peak in store.peaks),
                            key=lambda item: item[:3])
    for _, _, _, peak in incoming_peaks:
        content = tuple(peak[c] for c in _PEAK_CONTENT)
        if content in known_peaks:
            continue
        known_peaks.add(content)
        conn.execute(f"INSERT INTO device_peaks({', '.join(_PEAK_CONTENT)}) "
                     f"VALUES ({', '.join('?' for _ in _PEAK_CONTENT)})", content)
        report.peaks_added += 1
