"""The result store: one SQLite file, one row per (run, op, backend, method, sample).

Each run has its method's label (``llm/gpt-4o``, ``files/model-b``: kgb_core/labels.py),
copied into each of its results: the latest result per key, which the report reads, is per
(op, backend, emulation, label, sample), so two models run through one plugin keep their rows.

Every result is committed in its own transaction the moment it exists, in WAL mode with
``synchronous=FULL``, so a sweep killed at any instant loses at most the candidate in flight and
never leaves a half-written row; ``--resume`` reads back what is done. Each run keeps the
environment it ran in (device, torch, triton, kgb and plugin versions, commit) so any number
can be traced to where it was made.

Each run also has a ``uid``, made when it starts and kept when the store is copied, so that
``kgb merge`` (``kgb_core/merge.py``) recognises the same run in stores from several machines.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from kgb_core.candidates import Candidate
from kgb_core.errors import UserError
from kgb_core.evaluation.results import EvalResult
from kgb_core.labels import plan_label

SCHEMA_VERSION = 5

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    plan_key TEXT NOT NULL,
    plan TEXT NOT NULL,
    environment TEXT NOT NULL,
    uid TEXT,
    label TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    op TEXT NOT NULL,
    source TEXT NOT NULL,
    backend TEXT NOT NULL,
    emulates TEXT NOT NULL DEFAULT '',
    method TEXT NOT NULL,
    sample INTEGER NOT NULL,
    verdict TEXT NOT NULL,
    message TEXT NOT NULL,
    candidate_ms REAL,
    reference_ms REAL,
    speedup REAL,
    timing_label TEXT,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost_usd REAL,
    duration_s REAL,
    detail TEXT NOT NULL,
    candidate_source TEXT,
    generation TEXT,
    created_at TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    UNIQUE (run_id, op, backend, method, sample)
);
CREATE INDEX IF NOT EXISTS results_by_key ON results (op, backend, method, sample);
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL
);
-- Peaks measured by `kgb calibrate`, one row per measurement, keyed by the device name runs
-- record (environment.worker.device_name); the report reads the latest of each metric. A new
-- table needs no schema-version step: CREATE IF NOT EXISTS adds it to an older store on open,
-- and an older kgb ignores it.
CREATE TABLE IF NOT EXISTS device_peaks (
    id INTEGER PRIMARY KEY,
    device_name TEXT NOT NULL,
    backend TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    timer_label TEXT NOT NULL,
    detail TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


# Made after any migration: a store older than version 4 has no uid column until then, one
# older than version 5 no label column.
_LATE_INDEXES = ("CREATE UNIQUE INDEX IF NOT EXISTS runs_by_uid ON runs (uid)",
                 "CREATE INDEX IF NOT EXISTS results_by_label ON results (label, op, backend)")


@functools.cache
def content_columns(table: str) -> tuple[str, ...]:
    """The columns of ``table`` in this kgb's schema that hold a row's content, in schema
    order: all but where the row sits (``id``, ``run_id``). Read from the schema itself, so a
    merge or a copy of rows never keeps a column list of its own that a new column would miss."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(_SCHEMA)
        names = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
    finally:
        conn.close()
    if not names:
        raise ValueError(f"the store's schema has no table {table!r}")
    return tuple(name for name in names if name not in ("id", "run_id"))


def read_answer(conn: sqlite3.Connection, key: str) -> dict[str, Any] | None:
    """A cached model answer (the ``responses`` table) by its request's key, on any
    connection to a store: the store's own, or a generation thread's."""
    row = conn.execute("SELECT value FROM responses WHERE key=?", (key,)).fetchone()
    return None if row is None else json.loads(row[0])


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def legacy_run_uid(created_at: str, plan_key: str, environment: str) -> str:
    """The uid given to a run made before runs had one (schema < 4): derived from what the
    row holds, so every copy of that store gives the run the same uid."""
    text = json.dumps([created_at, plan_key, environment])
    return "legacy-" + hashlib.sha256(text.encode()).hexdigest()[:24]


def plan_key(plan: dict[str, Any]) -> str:
    """A stable fingerprint of what a run was asked to do, used to find the run to resume."""
    return hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()[:16]


def foreign_objects(conn: sqlite3.Connection) -> list[str]:
    """Triggers and views in a store. kgb creates none: one there was put by something else (a
    candidate that once reached the file rewrote verdicts with a trigger), so every number read
    from that store is in doubt."""
    rows = conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') "
                        "ORDER BY type, name").fetchall()
    return [f"{row[0]} {row[1]!r}" for row in rows]


def refusal(path: Path | str, found: list[str]) -> str:
    return (f"{path} holds {', '.join(found[:5])}, which kgb never creates: something other "
            f"than kgb changed this store, so its results cannot be trusted; kgb refuses it")


@dataclass(frozen=True)
class ResultKey:
    op: str
    backend: str
    method: str
    sample: int


class ResultStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise UserError(f"--db {self.path} is a directory; give a file name such as results.db")
        try:
            self._conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise UserError(f"{self.path} is not a kgb result store ({error})") from None
        self._refuse_foreign_objects()
        self._check_schema()

    def _refuse_foreign_objects(self) -> None:
        found = foreign_objects(self._conn)
        if found:
            self._conn.close()
            raise UserError(refusal(self.path, found))

    def _check_schema(self) -> None:
        # Read and migrate under one write lock: two kgb processes opening an old store at
        # once must not both add the same column.
        with self._transaction():
            row = self._conn.execute(
                "SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                self._conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)",
                                   (str(SCHEMA_VERSION),))
                self._create_late_indexes()
                return
            version = int(row["value"])
            if version > SCHEMA_VERSION:
                raise UserError(f"{self.path} has store schema {row['value']}, this kgb reads "
                                f"{SCHEMA_VERSION} and older; use a newer kgb")
            # Each step only adds columns, so the rows, plans and plan keys of an older store
            # are kept as they were and --resume continues its runs.
            if version < 2:  # version 2 added the generation record
                self._conn.execute("ALTER TABLE results ADD COLUMN generation TEXT")
            if version < 3:  # version 3 added the emulation label ('' = real hardware)
                self._conn.execute("ALTER TABLE results ADD COLUMN emulates TEXT NOT NULL "
                                   "DEFAULT ''")
            if version < 4:  # version 4 added the run uid that kgb merge keys runs by
                columns = {r["name"] for r in self._conn.execute("PRAGMA table_info(runs)")}
                if "uid" not in columns:
                    self._conn.execute("ALTER TABLE runs ADD COLUMN uid TEXT")
                rows = self._conn.execute("SELECT id, created_at, plan_key, environment "
                                          "FROM runs WHERE uid IS NULL").fetchall()
                for row in rows:
                    self._conn.execute("UPDATE runs SET uid=? WHERE id=?", (legacy_run_uid(
                        row["created_at"], row["plan_key"], row["environment"]), row["id"]))
            if version < 5:  # version 5 added method labels, derived from the runs' plans
                self._add_labels()
            if version < SCHEMA_VERSION:
                self._conn.execute("UPDATE meta SET value=? WHERE key='schema_version'",
                                   (str(SCHEMA_VERSION),))
            self._create_late_indexes()

    def _create_late_indexes(self) -> None:
        for statement in _LATE_INDEXES:
            self._conn.execute(statement)

    def _add_labels(self) -> None:
        """Label every run of an older store, and its results, from the run's plan."""
        for table in ("runs", "results"):
            columns = {r["name"] for r in self._conn.execute(f"PRAGMA table_info({table})")}
            if "label" not in columns:
                self._conn.execute(f"ALTER TABLE {table} ADD COLUMN label TEXT NOT NULL "
                                   f"DEFAULT ''")
        for row in self._conn.execute("SELECT id, plan FROM runs").fetchall():
            label = plan_label(json.loads(row["plan"]))
            self._conn.execute("UPDATE runs SET label=? WHERE id=?", (label, row["id"]))
            self._conn.execute("UPDATE results SET label=? WHERE run_id=?", (label, row["id"]))

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- runs ------------------------------------------------------------------------------
    def start_run(self, plan: dict[str, Any], environment: dict[str, Any],
                  label: str | None = None) -> int:
        """A new run; ``label`` is its method's (default: derived from ``plan``)."""
        cursor = self._conn.execute(
            "INSERT INTO runs(created_at, plan_key, plan, environment, uid, label) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (_now(), plan_key(plan), json.dumps(plan, sort_keys=True),
             json.dumps(environment, sort_keys=True, default=str), uuid.uuid4().hex,
             label or plan_label(plan)))
        return int(cursor.lastrowid)

    def latest_run_for(self, plan: dict[str, Any]) -> int | None:
        row = self._conn.execute("SELECT id FROM runs WHERE plan_key=? ORDER BY id DESC LIMIT 1",
                                 (plan_key(plan),)).fetchone()
        return None if row is None else int(row["id"])

    def finish_run(self, run_id: int) -> None:
        self._conn.execute("UPDATE runs SET finished_at=? WHERE id=?", (_now(), run_id))

    def runs(self) -> list[dict[str, Any]]:
        rows = self._conn.execute("SELECT * FROM runs ORDER BY id").fetchall()
        return [{**dict(row), "plan": json.loads(row["plan"]),
                 "environment": json.loads(row["environment"])} for row in rows]

    def run_listing(self) -> list[dict[str, Any]]:
        """Each run with its label, plan in short and result counts (``kgb runs``)."""
        counts = {row["run_id"]: (row["results"], row["passed"]) for row in self._conn.execute(
            "SELECT run_id, COUNT(*) AS results, SUM(verdict = 'pass') AS passed "
            "FROM results GROUP BY run_id")}
        listed = []
        for run in self.runs():
            plan = run["plan"]
            results, passed = counts.get(run["id"], (0, 0))
            listed.append({
                "id": run["id"], "uid": run["uid"], "label": run["label"],
                "method": plan.get("method"), "method_options": plan.get("method_options", {}),
                "backend": plan.get("backend", ""), "emulates": plan.get("emulates") or "",
                "planned_operators": len(plan.get("operators", [])),
                "results": results, "passed": passed or 0,
                "created_at": run["created_at"], "finished_at": run["finished_at"]})
        return listed

    # -- results ---------------------------------------------------------------------------
    def done_keys(self, run_id: int) -> set[ResultKey]:
        rows = self._conn.execute(
            "SELECT op, backend, method, sample FROM results WHERE run_id=?", (run_id,))
        return {ResultKey(r["op"], r["backend"], r["method"], r["sample"]) for r in rows}

    def record(self, run_id: int, source: str, result: EvalResult,
               candidate: Candidate | None) -> None:
        """Write one result in its own transaction, labelled with its run's label; a duplicate
        key is refused, not doubled."""
        with self._transaction():
            self._conn.execute(
                """INSERT INTO results(run_id, op, source, backend, emulates, method, sample,
                   verdict, message, candidate_ms, reference_ms, speedup, timing_label,
                   prompt_tokens, completion_tokens, cost_usd, duration_s, detail,
                   candidate_source, generation, created_at, label)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,
                           (SELECT label FROM runs WHERE id=?))""",
                (run_id, result.op, source, result.backend, result.emulates or "",
                 result.method, result.sample,
                 result.verdict, result.message, result.candidate_ms, result.reference_ms,
                 result.speedup, result.timing_label,
                 candidate.prompt_tokens if candidate else None,
                 candidate.completion_tokens if candidate else None,
                 candidate.cost_usd if candidate else None, result.duration_s,
                 json.dumps(result.to_dict(), default=str),
                 candidate.source if candidate else None,
                 json.dumps(candidate.generation) if candidate and candidate.generation else None,
                 _now(), run_id))

    # -- model answers (a method's response cache) ------------------------------------------
    def cached_answer(self, key: str) -> dict[str, Any] | None:
        return read_answer(self._conn, key)

    def cache_answer(self, key: str, value: dict[str, Any]) -> None:
        """Committed at once: an answer paid for survives a kill before its result is stored."""
        with self._transaction():
            self._conn.execute("INSERT OR REPLACE INTO responses(key, value, created_at) "
                               "VALUES (?, ?, ?)", (key, json.dumps(value), _now()))

    def run_usage(self, run_id: int) -> tuple[int, float]:
        """Tokens and dollars the results of one run cost so far."""
        row = self._conn.execute(
            "SELECT COALESCE(SUM(COALESCE(prompt_tokens, 0) + COALESCE(completion_tokens, 0)), 0)"
            " AS tokens, COALESCE(SUM(cost_usd), 0.0) AS cost FROM results WHERE run_id=?",
            (run_id,)).fetchone()
        return int(row["tokens"]), float(row["cost"])

    # -- device peaks (kgb calibrate) -------------------------------------------------------
    def record_peaks(self, device_name: str, backend: str,
                     measurements: list[dict[str, Any]]) -> None:
        """Store one calibration (every metric of one device) in one transaction.

        Each measurement has ``metric``, ``value``, ``unit``, ``timer_label`` and any further
        keys (sizes, median, cv), which are kept as its detail.
        """
        core = ("metric", "value", "unit", "timer_label")
        with self._transaction():
            for item in measurements:
                self._conn.execute(
                    "INSERT INTO device_peaks(device_name, backend, metric, value, unit, "
                    "timer_label, detail, created_at) VALUES (?,?,?,?,?,?,?,?)",
                    (device_name, backend, item["metric"], float(item["value"]), item["unit"],
                     item["timer_label"],
                     json.dumps({k: v for k, v in item.items() if k not in core}, default=str),
                     _now()))

    def peaks(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The latest measurement of each metric, per device name."""
        rows = self._conn.execute(
            """SELECT * FROM device_peaks WHERE id IN (
                   SELECT MAX(id) FROM device_peaks GROUP BY device_name, metric)
               ORDER BY device_name, metric""").fetchall()
        found: dict[str, dict[str, dict[str, Any]]] = {}
        for row in rows:
            entry = {**dict(row), "detail": json.loads(row["detail"])}
            found.setdefault(row["device_name"], {})[row["metric"]] = entry
        return found

    def _transaction(self) -> "_Transaction":
        return _Transaction(self._conn)

    def results(self, run_id: int | None = None) -> list[dict[str, Any]]:
        """Rows of one run, or (no run given) the latest row for each result key: (op, backend,
        emulation, label, sample)."""
        if run_id is not None:
            rows = self._conn.execute("SELECT * FROM results WHERE run_id=? ORDER BY id",
                                      (run_id,)).fetchall()
        else:
            # Latest by when it was recorded, then by id: in one store the two agree; in a
            # merged one (kgb merge) ids follow the merge, created_at the machines' clocks.
            rows = self._conn.execute(
                """SELECT * FROM results WHERE id IN (
                       SELECT id FROM (
                           SELECT id, ROW_NUMBER() OVER (
                               PARTITION BY op, backend, emulates, label, sample
                               ORDER BY created_at DESC, id DESC) AS newest
                           FROM results)
                       WHERE newest = 1)
                   ORDER BY id""").fetchall()
        return [dict(row) for row in rows]

    def iter_details(self, run_id: int) -> Iterator[EvalResult]:
        for row in self.results(run_id):
            yield EvalResult.from_dict(json.loads(row["detail"]))


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self._conn.execute("ROLLBACK" if exc_type else "COMMIT")
