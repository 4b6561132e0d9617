"""What a runner cannot reach: the store, the harness after it dies, other candidates.

The adversarial corpus (tests/adversarial/) checks one verdict per trick; these check what the
verdict alone cannot show: that the file of the store is untouched, that a killed harness leaves
no process behind, that a store someone else altered is refused, and that without the sandbox
every result says so.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kgb_core.errors import UserError
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.evaluation.sandbox import find_sandbox
from kgb_core.store import ResultStore

from conftest import kgb

SANDBOXED = find_sandbox().sandboxed
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason=f"no sandbox here: "
                                                          f"{find_sandbox().detail}")

ZEROS = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _fill(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.zeros((BLOCK,), dtype=out_ptr.dtype.element_ty),
             mask=offsets < n)


def _zeros_like(x):
    out = torch.empty_like(x)
    _fill[(triton.cdiv(x.numel(), 1024),)](out, x.numel(), BLOCK=1024)
    return out
'''


def _store_attack(path: Path) -> str:
    """A candidate that knows where the store is: it reads it, then adds a forging trigger."""
    return ZEROS + textwrap.dedent(f'''
        _os = torch.os
        _PATH = {str(path)!r}


        def kernel(x):
            try:
                fd = _os.open(_PATH, _os.O_RDONLY)
                head = _os.read(fd, 16)
                _os.close(fd)
            except OSError:
                head = b""
            if head.startswith(b"SQLite format"):
                raise RuntimeError("read the store")
            sqlite3 = torch.sys.modules["importlib"].import_module("sqlite3")
            try:
                connection = sqlite3.connect(_PATH)
                connection.execute("CREATE TRIGGER forge AFTER INSERT ON results BEGIN "
                                   "UPDATE results SET verdict='pass' WHERE id=NEW.id; END")
                connection.commit()
            except sqlite3.Error:
                pass
            return _zeros_like(x)
        ''')


@needs_sandbox
def test_a_runner_that_knows_the_stores_path_can_neither_read_nor_alter_it(tmp_path, registry):
    db = tmp_path / "results.db"
    ResultStore(db).close()
    before = db.read_bytes()
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False,
                                  hidden_paths=(str(db),), screen=False)
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        result = evaluator.evaluate("aten.neg", _store_attack(db))
    assert result.verdict == verdicts.WRONG_OUTPUT, result.message
    assert db.read_bytes() == before
    ResultStore(db).close()  # no foreign trigger: it opens


def test_a_store_holding_a_trigger_kgb_did_not_create_is_refused(tmp_path):
    db = tmp_path / "results.db"
    ResultStore(db).close()
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TRIGGER forge AFTER INSERT ON results BEGIN "
                           "UPDATE results SET verdict='pass' WHERE id=NEW.id; END")
    with pytest.raises(UserError, match="trigger 'forge'"):
        ResultStore(db)
    done = kgb("report", "--db", str(db))
    assert done.returncode == 2 and done.stderr.startswith("error:"), done.stderr
    assert "kgb never creates" in done.stderr
    merged = kgb("merge", str(db), "-o", str(tmp_path / "all.db"))
    assert merged.returncode == 2 and "trigger 'forge'" in merged.stderr


def test_a_store_holding_a_view_is_refused(tmp_path):
    db = tmp_path / "results.db"
    ResultStore(db).close()
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE VIEW passes AS SELECT * FROM results")
    with pytest.raises(UserError, match="view 'passes'"):
        ResultStore(db)


HANGING = ZEROS + '''

def kernel(x):
    while True:
        pass
'''

HARNESS = '''
import sys
from kgb_core.plugins import load_registry
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
registry = load_registry()
settings = EvaluationSettings(seeds=(0,), timeout_s=600, timing=False)
with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
    evaluator.evaluate("aten.neg", open(sys.argv[1]).read())
'''


def _marked(marker: bytes) -> list[int]:
    """Processes whose environment holds the marker (their command lines vary)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            if marker in Path(f"/proc/{name}/environ").read_bytes():
                found.append(int(name))
        except OSError:
            pass
    return found


def test_nothing_outlives_a_harness_killed_while_a_candidate_hangs(tmp_path):
    marker = f"KGB_TEST_MARKER=harness-kill-{os.getpid()}-{time.time_ns()}"
    candidate = tmp_path / "hang.py"
    candidate.write_text(HANGING)
    env = {**os.environ, marker.split("=")[0]: marker.split("=")[1]}
    harness = subprocess.Popen([sys.executable, "-c", HARNESS, str(candidate)], env=env)
    try:
        deadline = time.monotonic() + 120
        # Wait for the harness, its judge, the template and a runner spinning in kernel(...).
        while time.monotonic() < deadline and len(_marked(marker.encode())) < 4:
            time.sleep(0.5)
        assert len(_marked(marker.encode())) >= 4, "the runner never started"
        time.sleep(1.0)
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _marked(marker.encode()):
        time.sleep(0.25)
    assert _marked(marker.encode()) == [], "processes outlived their harness"


def test_without_the_sandbox_every_result_says_so(monkeypatch, registry):
    monkeypatch.setenv("KGB_SANDBOX", "none")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    spec = registry.operator("aten.neg")
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        info = evaluator.start()
        result = evaluator.evaluate(spec.id, spec.reference_kernel())
    assert info["sandbox"] == "none" and "KGB_SANDBOX=none" in info["sandbox_detail"]
    assert result.verdict == verdicts.PASS and result.sandbox == "none"


def test_a_sweep_without_the_sandbox_warns_once_and_records_it(tmp_path):
    db = tmp_path / "r.db"
    done = kgb("run", "--op", "aten.neg", "--op", "aten.relu", "--backend", "cpu", "--db",
               str(db), "--no-timing", "--seed", "0", env={"KGB_SANDBOX": "none"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("WITHOUT an OS sandbox") == 1, done.stderr
    with ResultStore(db) as store:
        rows = store.results()
    assert rows and all('"sandbox": "none"' in row["detail"] for row in rows)
    report = kgb("report", "--db", str(db))
    assert "2 result(s) ran their candidate WITHOUT an OS sandbox" in report.stdout
    as_json = kgb("report", "--db", str(db), "--json")
    assert '"none": 2' in as_json.stdout


@needs_sandbox
def test_a_sandboxed_sweep_records_bwrap_in_every_result(tmp_path):
    db = tmp_path / "r.db"
    done = kgb("run", "--op", "aten.neg", "--backend", "cpu", "--db", str(db), "--no-timing",
               "--seed", "0")
    assert done.returncode == 0, done.stderr
    assert "WITHOUT an OS sandbox" not in done.stderr
    with ResultStore(db) as store:
        rows = store.results()
    assert rows and all('"sandbox": "bwrap"' in row["detail"] for row in rows)


def test_python_and_the_checkout_stay_visible_when_they_lie_in_an_emptied_folder(monkeypatch,
                                                                                tmp_path):
    """A CI clone (and its .venv) under /tmp: the sandbox empties /tmp, and every runner once
    failed to start there. The top folder is bound back read-only, before the masks."""
    from kgb_core.evaluation import sandbox

    clone = tmp_path / "clone"
    (clone / "lib").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(clone / "lib"), *sys.path])
    tool = sandbox.SandboxTool(sandbox.BWRAP, "test", "/usr/bin/bwrap")
    line = sandbox.command(tool, ["python"], masked=[str(clone / "lib")])
    top = os.sep + os.path.join(*str(tmp_path).split(os.sep)[1:3])  # /tmp/<first folder>
    binds = [i for i in range(len(line) - 2) if line[i:i + 3] == ["--ro-bind", top, top]]
    assert binds and binds[0] > line.index("/tmp")  # after /tmp is emptied
    assert line.index(str(clone / "lib")) > binds[0]  # the mask comes after, and still applies


def test_a_killed_judges_work_folder_is_removed_by_the_next_judge(tmp_path):
    from kgb_core.evaluation import runners

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    orphan = tmp_path / f"{runners.WORK_PREFIX}{gone.pid}-abc"
    (orphan / "runner-1").mkdir(parents=True)
    (orphan / "runner-1" / "in-1.bin").write_bytes(b"\0" * 4096)
    alive = tmp_path / f"{runners.WORK_PREFIX}{os.getpid()}-def"
    alive.mkdir()
    unrelated = tmp_path / "kgb-runners-notapid"
    unrelated.mkdir()
    recent = tmp_path / f"{runners.WORK_PREFIX}{gone.pid}-recent"  # perhaps another namespace's
    recent.mkdir()
    hours_ago = time.time() - 2 * runners.ORPHAN_AGE_S
    for folder in (orphan, alive, unrelated):
        os.utime(folder, (hours_ago, hours_ago))
    runners.remove_orphans(str(tmp_path))
    assert not orphan.exists()
    assert alive.exists() and unrelated.exists() and recent.exists()


def test_runner_folders_go_where_kgb_runner_dir_says(monkeypatch, tmp_path):
    from kgb_core.evaluation import runners

    monkeypatch.setenv("KGB_RUNNER_DIR", str(tmp_path))
    assert runners.runners_root() == str(tmp_path)
    monkeypatch.delenv("KGB_RUNNER_DIR")
    assert runners.runners_root() is None


def test_a_spawn_that_fails_leaves_the_judge_no_descriptor(tmp_path, monkeypatch):
    """The judge makes a runner's socket pair and arenas before the template answers; when the
    answer never comes (a timeout, a template that cannot fork), every one of them is closed:
    a judge lives for many candidates."""
    import socket as socketlib

    from kgb_core.evaluation import runners

    template = runners.RunnerTemplate.__new__(runners.RunnerTemplate)
    template.seed_cache, template.work, template.exits = None, tmp_path, []
    template.control, far_end = socketlib.socketpair()
    monkeypatch.setattr(template, "wait_ready", lambda: None)

    def no_answer(timeout_s):
        raise runners.RunnerTimedOut()

    monkeypatch.setattr(template, "_next", no_answer)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(runners.RunnerTimedOut):
            template.spawn(1.0)
        far_end.recv(1 << 16)  # the spawn message itself (its descriptors closed with it)
    assert len(os.listdir("/proc/self/fd")) == before
