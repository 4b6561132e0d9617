"""The SQLite store: WAL, one row per key, resume keys, latest-result views."""

from __future__ import annotations

import sqlite3

import pytest

from kgb_core.candidates import Candidate
from kgb_core.errors import UserError
from kgb_core.evaluation.results import EvalResult
from kgb_core.store import ResultKey, ResultStore

PLAN = {"operators": ["aten.add"], "method": "reference", "backend": "cpu"}


def _result(op="aten.add", verdict="pass", sample=0, speedup=1.5):
    return EvalResult(op=op, backend="cpu", verdict=verdict, method="reference", sample=sample,
                      speedup=speedup, candidate_ms=1.0, reference_ms=1.5)


def test_results_are_committed_and_read_back_from_another_connection(tmp_path):
    path = tmp_path / "r.db"
    with ResultStore(path) as store:
        run = store.start_run(PLAN, {"device": "cpu"})
        store.record(run, "aten", _result(), Candidate(source="src", prompt_tokens=10,
                                                       completion_tokens=5, cost_usd=0.01))
        # A second connection sees the row at once: it was committed, not buffered.
        other = sqlite3.connect(path)
        row = other.execute("SELECT op, verdict, prompt_tokens, candidate_source FROM results").fetchone()
        assert row == ("aten.add", "pass", 10, "src")
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        other.close()


def test_a_key_is_stored_once(tmp_path):
    with ResultStore(tmp_path / "r.db") as store:
        run = store.start_run(PLAN, {})
        store.record(run, "aten", _result(), None)
        with pytest.raises(sqlite3.IntegrityError):
            store.record(run, "aten", _result(), None)
        assert store.done_keys(run) == {ResultKey("aten.add", "cpu", "reference", 0)}


def test_resume_finds_the_latest_run_with_the_same_plan(tmp_path):
    with ResultStore(tmp_path / "r.db") as store:
        first = store.start_run(PLAN, {})
        second = store.start_run(PLAN, {})
        store.start_run({**PLAN, "backend": "nvidia"}, {})
        assert store.latest_run_for(PLAN) == second != first
        assert store.latest_run_for({"other": 1}) is None


def test_without_a_run_the_latest_result_per_key_is_reported(tmp_path):
    with ResultStore(tmp_path / "r.db") as store:
        old = store.start_run(PLAN, {})
        store.record(old, "aten", _result(verdict="wrong_output"), None)
        new = store.start_run(PLAN, {})
        store.record(new, "aten", _result(verdict="pass"), None)
        assert [r["verdict"] for r in store.results()] == ["pass"]
        assert [r["verdict"] for r in store.results(old)] == ["wrong_output"]


def test_a_file_that_is_not_a_store_is_a_user_error(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(UserError, match="not a kgb result store"):
        ResultStore(path)
    with pytest.raises(UserError, match="is a directory"):
        ResultStore(tmp_path)


def test_a_version_1_store_is_migrated_in_place(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE runs (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, finished_at TEXT,
            plan_key TEXT NOT NULL, plan TEXT NOT NULL, environment TEXT NOT NULL);
        CREATE TABLE results (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, op TEXT NOT NULL,
            source TEXT NOT NULL, backend TEXT NOT NULL, method TEXT NOT NULL,
            sample INTEGER NOT NULL, verdict TEXT NOT NULL, message TEXT NOT NULL,
            candidate_ms REAL, reference_ms REAL, speedup REAL, timing_label TEXT,
            prompt_tokens INTEGER, completion_tokens INTEGER, cost_usd REAL, duration_s REAL,
            detail TEXT NOT NULL, candidate_source TEXT, created_at TEXT NOT NULL,
            UNIQUE (run_id, op, backend, method, sample));
    """)
    conn.close()
    with ResultStore(path) as store:
        run = store.start_run(PLAN, {})
        store.record(run, "aten", _result(), Candidate(source="s", generation={"prompt": "p"}))
        assert store.results(run)[0]["generation"] == '{"prompt": "p"}'


def test_a_version_3_store_gets_run_uids_that_every_copy_agrees_on(tmp_path):
    from kgb_core.store import SCHEMA_VERSION, legacy_run_uid

    path = tmp_path / "v3.db"
    with ResultStore(path) as store:
        store.start_run(PLAN, {"host": "a"})
    conn = sqlite3.connect(path)
    conn.executescript("DROP INDEX runs_by_uid; ALTER TABLE runs DROP COLUMN uid; "
                       "UPDATE meta SET value='3' WHERE key='schema_version';")
    (created_at, key, environment), = conn.execute(
        "SELECT created_at, plan_key, environment FROM runs").fetchall()
    conn.close()
    with ResultStore(path) as store:
        (run,) = store.runs()
        assert run["uid"] == legacy_run_uid(created_at, key, environment)
        fresh = store.start_run(PLAN, {})
        assert len({r["uid"] for r in store.runs()}) == 2 and fresh == 2
    assert sqlite3.connect(path).execute(
        "SELECT value FROM meta WHERE key='schema_version'").fetchone() == (str(SCHEMA_VERSION),)


def test_a_merge_copies_every_column_a_store_has(tmp_path):
    """The merge's content columns are the schema's, read from it: a column a later kgb adds
    to results or device_peaks is copied by the merge, not dropped by a stale list."""
    from kgb_core import merge
    from kgb_core.store import content_columns

    with ResultStore(tmp_path / "s.db"):
        pass
    conn = sqlite3.connect(tmp_path / "s.db")
    for table, used in (("results", merge._CONTENT), ("device_peaks", merge._PEAK_CONTENT)):
        on_disk = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        assert list(used) == [c for c in on_disk if c not in ("id", "run_id")]
    conn.close()
    with pytest.raises(ValueError, match="no table 'nope'"):
        content_columns("nope")
