"""``benchmarks/gate_replay.py`` replays a measured sweep's jobs through kgb's own memory gate:
its numbers are only worth what the replay's clock and order are, so both are checked here on
four jobs whose schedule can be worked out by hand."""

from __future__ import annotations

import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

import gate_replay  # noqa: E402

GIB = 1 << 30

# Three workers, 10 GiB: A and B (6 GiB each) cannot share; C and D (3 GiB) fit beside either.
ROWS = """# op, verdict, duration_s, alone, wait, wait alone, judge GiB, runner GiB, need GiB
aten.a pass 2.0 0 0.5 0 4 2 6
aten.b pass 2.0 0 0 0 4 2 6
aten.c pass 1.0 0 0 0 2 1 3
aten.d pass 2.0 0 0 0 2 1 3
"""


@pytest.fixture
def jobs(tmp_path):
    path = tmp_path / "rows.txt"
    path.write_text(ROWS)
    return gate_replay.read_jobs(path)


def test_rows_are_read_with_their_needs_and_peaks(jobs):
    assert [j["op"] for j in jobs] == ["aten.a", "aten.b", "aten.c", "aten.d"]
    assert [j["then"] for j in jobs] == [6 * GIB, 6 * GIB, 3 * GIB, 3 * GIB]
    assert [j["peak"] for j in jobs] == [6 * GIB, 6 * GIB, 3 * GIB, 3 * GIB]
    assert [j["lock_wait"] for j in jobs] == [0.5, 0.0, 0.0, 0.0]


def test_the_replay_keeps_the_measured_clock_and_the_gates_order(jobs):
    """In order: A runs, B waits, C waits behind B; at 2 s B and C start, D waits for C (1 s
    more) and ends at 5 s. Passing: C starts beside A, D beside A once C ended, B at 2 s: 4 s."""
    needs = [int(j["then"]) for j in jobs]
    wall, waited, ahead = gate_replay.replay(jobs, needs, 3, 10 * GIB, 0.0, scale=2.0)
    assert wall == pytest.approx(5.0, abs=0.4) and ahead == 0
    assert waited == pytest.approx(2.0 + 2.0 + 1.0, abs=0.4)  # B 2, C 2, D 1
    wall, waited, ahead = gate_replay.replay(jobs, needs, 3, 10 * GIB, 20.0, scale=2.0)
    assert wall == pytest.approx(4.0, abs=0.4) and ahead == 2
    assert waited == pytest.approx(2.0, abs=0.4)  # B alone waits, for A


def test_the_bound_is_the_larger_of_spread_work_and_packed_memory(jobs):
    needs = [int(j["then"]) for j in jobs]
    # 7 s of work over 3 workers; 6x2 + 6x2 + 3x1 + 3x2 = 33 GiB-s over 10 GiB.
    assert gate_replay.bound(jobs, needs, 3, 10 * GIB) == pytest.approx(3.3)
    assert gate_replay.bound(jobs, needs, 1, 10 * GIB) == pytest.approx(7.0)
    # A job larger than the device counts as the whole of it.
    assert gate_replay.bound(jobs, [40 * GIB] * 4, 3, 10 * GIB) == pytest.approx(7.0)


def test_full_sweeps_own_rows_are_read_by_their_header_and_cut_jobs_left_out(tmp_path):
    path = tmp_path / "rows.txt"
    path.write_text("# op verdict duration_s device_alone_s device_wait_s device_wait_alone_s "
                    "memory_wait_s peak_judge_gib peak_runner_gib trials_s timing_s "
                    "retried_alone\n"
                    "aten.a pass 2.0 0.1 0.5 0.2 7.0 4.00 2.00 1.0 1.0 ''\n"
                    "aten.b timeout 9.0 0.0 0.0 0.0 0.0 - - 1.0 1.0 ''\n")
    jobs = gate_replay.read_jobs(path)
    assert jobs == [{"op": "aten.a", "seconds": 2.0, "lock_wait": 0.5, "peak": 6.0 * GIB,
                     "then": None}]
