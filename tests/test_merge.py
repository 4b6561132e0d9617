"""``kgb merge``: stores of two "machines" (a plain CPU run and a CPU run emulating another
chip) with overlapping rows merge into one, idempotently; conflicts stop the merge unless
--prefer settles them; the report of the merged store shows both backends."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

import kgb_test_plugins
from conftest import KERNELS, kgb
from kgb_core.config import RunConfig
from kgb_core.errors import UserError
from kgb_core.merge import merge_stores
from kgb_core.plugins import load_registry
from kgb_core.store import ResultStore
from kgb_core.sweep import plan_sweep, run_sweep


def _sweep(db, registry, **config):
    plan = plan_sweep(RunConfig(backend="cpu", seeds=[0], timing=False, timeout_s=60, **config),
                      registry)
    with ResultStore(db) as store:
        run_sweep(plan, registry, store, resume=False)


@pytest.fixture(scope="module")
def machines(tmp_path_factory):
    """machine_a.db: two runs (the second made after a copy of the store was taken);
    a_copy.db: that copy; machine_b.db: a run emulating fakechip (one op denied there)."""
    root = tmp_path_factory.mktemp("machines")
    # Made before KGB_EXTRA_PLUGINS is set, which would register the test plugins twice.
    registry = load_registry(extra=[("kgb_test_plugins", kgb_test_plugins)])
    with pytest.MonkeyPatch.context() as patch:
        # The worker finds fakechip through KGB_EXTRA_PLUGINS, like any installed plugin.
        patch.setenv("KGB_EXTRA_PLUGINS", "kgb_test_plugins")
        patch.setenv("PYTHONPATH", str(KERNELS.parent))
        _sweep(root / "machine_a.db", registry, ops=["aten.neg", "aten.abs"])
        shutil.copy(root / "machine_a.db", root / "a_copy.db")
        _sweep(root / "machine_a.db", registry, ops=["aten.relu"])
        _sweep(root / "machine_b.db", registry, ops=["aten.neg", "aten.sort"],
               emulate="fakechip")
    return root


def _rows(db, sql="SELECT COUNT(*) FROM results"):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_overlapping_stores_merge_once_and_the_report_shows_both_backends(machines, tmp_path):
    merged = tmp_path / "all.db"
    inputs = [machines / "a_copy.db", machines / "machine_a.db", machines / "machine_b.db"]
    first = merge_stores(inputs, merged)
    assert (first.runs_added, first.runs_known) == (3, 1)  # a_copy's run is machine_a's first
    assert (first.results_added, first.results_known) == (5, 2)
    assert first.conflicts == []
    again = merge_stores(inputs, merged)  # merging twice adds nothing
    assert (again.runs_added, again.results_added) == (0, 0)
    assert (again.runs_known, again.results_known) == (4, 7)
    assert _rows(merged) == [(5,)]
    assert _rows(merged, "SELECT COUNT(*) FROM runs") == [(3,)]
    # A merged store merged with one of its parts again is the same store.
    other = tmp_path / "all2.db"
    merge_stores([merged, machines / "machine_b.db"], other)
    assert _rows(other, "SELECT op, backend, emulates, verdict FROM results ORDER BY id") == \
        _rows(merged, "SELECT op, backend, emulates, verdict FROM results ORDER BY id")

    # Every run came with the environment it ran in, unchanged.
    sql = "SELECT uid, plan, environment, finished_at FROM runs ORDER BY uid"
    assert _rows(merged, sql) == sorted(_rows(machines / "machine_a.db", sql)
                                        + _rows(machines / "machine_b.db", sql))

    report = kgb("report", "--db", str(merged), "--json")
    assert report.returncode == 0, report.stderr
    summary = {s["backend_label"]: s for s in json.loads(report.stdout)["summary"]}
    assert set(summary) == {"cpu", "cpu (emulating fakechip)"}
    assert (summary["cpu"]["operators"], summary["cpu"]["correct"]) == (3, 3)
    emulated = summary["cpu (emulating fakechip)"]
    assert (emulated["operators"], emulated["skipped"], emulated["correct"]) == (1, 1, 1)


def test_a_conflict_writes_nothing_unless_prefer_settles_it(machines, tmp_path):
    merged = tmp_path / "all.db"
    merge_stores([machines / "machine_b.db"], merged)
    resumed_elsewhere = tmp_path / "b_elsewhere.db"
    shutil.copy(machines / "machine_b.db", resumed_elsewhere)
    conn = sqlite3.connect(resumed_elsewhere)
    conn.execute("UPDATE results SET verdict='wrong_output', message='other machine', "
                 "created_at='2999-01-01T00:00:00+00:00' WHERE op='aten.neg'")
    conn.commit()
    conn.close()
    before = _rows(merged, "SELECT op, verdict FROM results ORDER BY op")

    refused = kgb("merge", str(resumed_elsewhere), "-o", str(merged))
    assert refused.returncode == 2
    assert "1 result(s) differ" in refused.stderr and "--prefer" in refused.stderr
    assert _rows(merged, "SELECT op, verdict FROM results ORDER BY op") == before

    older = kgb("merge", str(resumed_elsewhere), "-o", str(merged), "--prefer", "older")
    assert older.returncode == 0 and "conflict (kept the older row)" in older.stdout
    assert _rows(merged, "SELECT op, verdict FROM results ORDER BY op") == before
    newer = kgb("merge", str(resumed_elsewhere), "-o", str(merged), "--prefer", "newer",
                "--json")
    assert newer.returncode == 0, newer.stderr
    assert json.loads(newer.stdout)["results_replaced"] == 1
    assert _rows(merged, "SELECT op, verdict FROM results ORDER BY op") == [
        ("aten.neg", "wrong_output"), ("aten.sort", "skipped_denied")]


def test_a_store_from_before_run_uids_merges_idempotently_and_is_not_changed(machines,
                                                                               tmp_path):
    legacy = tmp_path / "v3.db"
    shutil.copy(machines / "a_copy.db", legacy)
    conn = sqlite3.connect(legacy)
    conn.executescript("DROP INDEX runs_by_uid; ALTER TABLE runs DROP COLUMN uid; "
                       "UPDATE meta SET value='3' WHERE key='schema_version';")
    conn.close()
    merged = tmp_path / "all.db"
    assert merge_stores([legacy], merged).results_added == 2
    assert merge_stores([legacy], merged).results_added == 0
    assert _rows(legacy, "SELECT value FROM meta WHERE key='schema_version'") == [("3",)]
    (uid,) = _rows(merged, "SELECT uid FROM runs")[0]
    assert uid.startswith("legacy-")


def test_bad_inputs_are_one_line_errors(tmp_path):
    with pytest.raises(UserError, match="no result store at"):
        merge_stores([tmp_path / "missing.db"], tmp_path / "out.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite" * 100)
    with pytest.raises(UserError, match="not a kgb result store"):
        merge_stores([junk], tmp_path / "out.db")
    assert not (tmp_path / "out.db").exists(), "a merge that stopped leaves no output behind"
    with pytest.raises(UserError, match="--prefer must be one of"):
        merge_stores([junk], tmp_path / "out.db", prefer="mine")


def test_calibrations_travel_with_the_merge_once(machines, tmp_path):
    """The report's roofline % reads `device_peaks`; a merged store without them would lose it."""
    chip_a, chip_b = tmp_path / "chip_a.db", tmp_path / "chip_b.db"
    shutil.copy(machines / "machine_a.db", chip_a)
    shutil.copy(machines / "machine_b.db", chip_b)
    peak = {"metric": "copy", "unit": "GB/s", "timer_label": "perf_counter", "cv": 0.01}
    with ResultStore(chip_a) as store:
        store.record_peaks("chip A", "cpu", [{**peak, "value": 10.0}])
        store.record_peaks("chip A", "cpu", [{**peak, "value": 12.0}])  # recalibrated later
    with ResultStore(chip_b) as store:
        store.record_peaks("chip B", "cpu", [{**peak, "value": 20.0}])
    merged = tmp_path / "all.db"
    first = merge_stores([chip_a, chip_b], merged)
    assert first.peaks_added == 3
    assert merge_stores([chip_b, chip_a], merged).peaks_added == 0  # nothing twice
    with ResultStore(merged) as store:
        latest = store.peaks()
    assert {device: metrics["copy"]["value"] for device, metrics in latest.items()} == \
        {"chip A": 12.0, "chip B": 20.0}
    assert latest["chip A"]["copy"]["detail"] == {"cv": 0.01}
