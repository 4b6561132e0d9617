"""The command method with a real agent program (tests/agents/copy_reference_agent.py) run by a
real ``kgb run``: verdicts, token usage from each of its three sources, failures and timeouts
recorded as no_candidate, and the work folder the program is given."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from conftest import TESTS, kgb
from kgb_core.candidates import Candidate
from kgb_core.errors import UserError
from kgb_core.methods import GenerationContext
from kgb_methods.agent_usage import claude_stream_json as parse_stream_json
from kgb_methods.command import AgentFailed, CommandMethod, write_workdir
from kgb_methods.prompts import reference_source

try:
    import importlib_metadata
except ImportError:  # pragma: no cover
    import importlib.metadata as importlib_metadata  # type: ignore[no-redef]

AGENT = TESTS / "agents" / "copy_reference_agent.py"
HARNESS_FILES = ("TASK.md", "spec.json", "reference.py", "eval.sh")


def _plugin_env() -> dict[str, str]:
    """Register the method by module until the package is reinstalled with its entry point;
    both at once would be a duplicate name."""
    installed = {ep.name for ep in importlib_metadata.entry_points(group="kgb")}
    return {} if "command" in installed else {"KGB_EXTRA_PLUGINS": "kgb_methods.command"}


def _kernel_dir(tmp_path: Path, registry, ops: list[str]) -> Path:
    folder = tmp_path / "kernels"
    folder.mkdir()
    for op in ops:
        (folder / f"{op}.py").write_text(registry.operator(op).reference_kernel())
    return folder


def _run(tmp_path: Path, ops: list[str], method_toml: str, env: dict[str, str]):
    config = tmp_path / "run.toml"
    config.write_text(f'[run]\nops = {json.dumps(ops)}\nbackend = "cpu"\n'
                      f'[method]\nname = "command"\n{method_toml}'
                      f'[evaluation]\nseeds = [0]\ntiming = false\n')
    db = tmp_path / "r.db"
    done = kgb("run", "--config", str(config), "--db", str(db), env={**_plugin_env(), **env})
    return done, db


def _rows(db: Path) -> dict[str, dict]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    return {row["op"]: dict(row) for row in conn.execute("SELECT * FROM results ORDER BY id")}


def _folders(root: Path) -> dict[str, Path]:
    return {folder.name.split(".sample")[0]: folder for folder in root.iterdir()}


@pytest.fixture(scope="module")
def main_run(tmp_path_factory):
    """One sweep over five operators, each with its own behaviour, folders kept."""
    from kgb_core.plugins import load_registry

    tmp_path = tmp_path_factory.mktemp("command")
    ops = ["aten.neg", "aten.relu", "aten.abs", "aten.add", "aten.exp"]
    kernels = _kernel_dir(tmp_path, load_registry(), ops)
    root = tmp_path / "workdirs"
    method = (f'command = {json.dumps([sys.executable, str(AGENT)])}\ntimeout_s = 120\n'
              f'keep_workdirs = true\nworkdir_root = "{root}"\n'
              f'price_input_per_mtok = 3.0\nprice_output_per_mtok = 15.0\n')
    behaviour = ("aten.neg=usage+self-check,aten.relu=stream-json,aten.add=wrong,"
                 "aten.exp=usage-no-cost")
    done, db = _run(tmp_path, ops, method, {"KGB_TEST_KERNEL_DIR": str(kernels),
                                            "KGB_TEST_BEHAVIOUR": behaviour})
    assert done.returncode == 0, done.stderr
    return _rows(db), root


def test_a_right_kernel_passes_with_the_usage_json_it_wrote(main_run):
    rows, _ = main_run
    row = rows["aten.neg"]
    assert row["verdict"] == "pass", row["message"]
    assert (row["prompt_tokens"], row["completion_tokens"], row["cost_usd"]) == (1234, 567, 0.0421)
    generation = json.loads(row["generation"])
    assert generation["tokens_source"] == "usage.json" and generation["exit_status"] == 0
    assert generation["cost_source"] == "reported" and generation["seconds"] > 0


def test_usage_json_without_a_cost_is_priced_from_the_config(main_run):
    row = main_run[0]["aten.exp"]
    assert row["verdict"] == "pass", row["message"]
    assert (row["prompt_tokens"], row["completion_tokens"]) == (2000, 1000)
    assert abs(row["cost_usd"] - (2000 * 3.0 + 1000 * 15.0) / 1e6) < 1e-12
    assert json.loads(row["generation"])["cost_source"] == "prices"


def test_stream_json_usage_is_the_result_lines_total(main_run):
    row = main_run[0]["aten.relu"]
    assert row["verdict"] == "pass", row["message"]
    assert (row["prompt_tokens"], row["completion_tokens"]) == (20 + 2100 + 4000, 400)
    assert row["cost_usd"] == 0.1234
    assert json.loads(row["generation"])["tokens_source"] == "claude-stream-json"


def test_no_usage_leaves_tokens_unknown(main_run):
    row = main_run[0]["aten.abs"]
    assert row["verdict"] == "pass", row["message"]
    assert row["prompt_tokens"] is None and row["completion_tokens"] is None
    assert row["cost_usd"] is None  # prices exist, but nothing to price
    generation = json.loads(row["generation"])
    assert generation["tokens"] == "unknown" and generation["tokens_source"] == "unknown"


def test_a_wrong_kernel_is_wrong_output_and_the_sweep_goes_on(main_run):
    rows, _ = main_run
    assert rows["aten.add"]["verdict"] == "wrong_output"
    assert rows["aten.exp"]["verdict"] == "pass"  # the next operator, after the wrong one
    assert list(rows) == ["aten.neg", "aten.relu", "aten.abs", "aten.add", "aten.exp"]


def test_the_work_folder_holds_the_task_and_no_held_out_case(main_run, registry):
    rows, root = main_run
    folders = _folders(root)
    assert sorted(folders) == sorted(rows)
    for op_id, folder in folders.items():
        assert json.loads(rows[op_id]["generation"])["workdir"] == str(folder)
        for name in HARNESS_FILES + ("kernel.py",):
            assert (folder / name).is_file(), (op_id, name)
        assert os.access(folder / "eval.sh", os.X_OK)
        spec = json.loads((folder / "spec.json").read_text())
        assert spec["id"] == op_id and spec["backend"] == "cpu"
        assert spec["quirks"]["device_type"] == "cpu" and spec["heldout_cases"] >= 1
        task = (folder / "TASK.md").read_text()
        assert op_id in task and "kernel.py" in task and "eval.sh" in task
        hidden = [c.name for c in registry.operator(op_id).cases if c.heldout]
        assert hidden
        # Nothing in the folder, `kgb eval`'s own output (self_check.json) included, may name
        # a held-out case: names hint at shapes.
        for path in folder.iterdir():
            text = path.read_text()
            assert not re.search(r"heldout_(?!cases\b)", text), path  # spec.json counts them
            assert not any(name in text for name in hidden), path
    reference = (folders["aten.neg"] / "reference.py").read_text()
    assert "torch_neg" in reference and "Signature: kernel(x: Tensor)" in reference


def test_a_reference_with_its_own_source_is_copied(tmp_path, registry):
    op = registry.operator("aten.pow")
    write_workdir(tmp_path, op, registry.backend("cpu").quirks, "cpu", 60)
    reference = (tmp_path / "reference.py").read_text()
    assert reference_source(op) in reference and reference.count("def ") >= 1
    compile(reference, "reference.py", "exec")


def test_eval_sh_lets_the_agent_check_itself(main_run):
    _, root = main_run
    report = json.loads((_folders(root)["aten.neg"] / "self_check.json").read_text())
    assert report["verdict"] == "pass" and report["op"] == "aten.neg"


def test_failures_and_timeouts_are_no_candidate_and_the_group_is_killed(tmp_path, registry):
    kernels = _kernel_dir(tmp_path, registry, ["aten.abs"])
    pids = tmp_path / "pids"
    pids.mkdir()
    root = tmp_path / "workdirs"
    method = (f'command = "{sys.executable} {AGENT}"\ntimeout_s = 2\n'
              f'workdir_root = "{root}"\n')
    started = time.monotonic()
    done, db = _run(tmp_path, ["aten.neg", "aten.relu", "aten.abs"], method,
                    {"KGB_TEST_KERNEL_DIR": str(kernels), "KGB_TEST_PID_DIR": str(pids),
                     "KGB_TEST_BEHAVIOUR": "aten.neg=fail,aten.relu=sleep"})
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    # Not a speed target: a run that waited on the agent would never end (it sleeps forever);
    # the sweep itself takes 10-30 s on a loaded 2-core machine. The pids below show the kill.
    assert elapsed < 55, elapsed
    rows = _rows(db)
    assert rows["aten.neg"]["verdict"] == "no_candidate"
    assert "exit status 3" in rows["aten.neg"]["message"]
    assert "agent: giving up" in rows["aten.neg"]["message"]  # the stderr tail
    assert rows["aten.relu"]["verdict"] == "no_candidate"
    assert "timed out after 2 s" in rows["aten.relu"]["message"]
    assert rows["aten.abs"]["verdict"] == "pass"
    for pid in map(int, (pids / "aten.relu.pids").read_text().split()):
        assert not _alive(pid), pid  # the agent and the child it started
    assert list(root.iterdir()) == []  # keep_workdirs defaults to false


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "zombie" not in status


@pytest.mark.parametrize("method_toml, expected", [
    ('command = ["true"]\ncommandd = 1\n', "method 'command' has no option 'commandd'"),
    ('timeout_s = 5\n', "method command needs its command"),
    ('command = ["no-such-agent-program-kgb"]\n', "is not on PATH"),
    ('command = ["true"]\nsamples = 0\n', "samples must be an integer of at least 1"),
    ('command = ["true"]\nsamples = "two"\n', "option samples takes a whole number, got 'two'"),
])
def test_bad_options_are_one_line_user_errors(tmp_path, method_toml, expected):
    done, _ = _run(tmp_path, ["aten.neg"], method_toml, {})
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert expected in line and "Traceback" not in done.stderr


def test_each_sample_gets_its_own_fresh_folder(tmp_path, registry):
    script = ('import os, pathlib; print(sorted(os.listdir())); '
              'pathlib.Path("kernel.py").write_text("# " + os.environ["KGB_SAMPLE"])')
    options = {"command": [sys.executable, "-c", script], "samples": 2,
               "keep_workdirs": True, "workdir_root": str(tmp_path)}
    op = registry.operator("aten.neg")
    ctx = GenerationContext(options=options, backend_name="cpu")
    candidates = CommandMethod().generate(op, registry.backend("cpu").quirks, ctx)
    assert [c.sample for c in candidates] == [0, 1]
    assert [c.source for c in candidates] == ["# 0", "# 1"]
    folders = {c.generation["workdir"] for c in candidates}
    assert len(folders) == 2
    for candidate in candidates:
        assert "['TASK.md', 'eval.sh', 'reference.py', 'spec.json']" in candidate.log[1]
        assert isinstance(candidate, Candidate) and candidate.prompt_tokens is None


def test_a_program_that_exits_zero_without_a_kernel_raises(tmp_path, registry):
    ctx = GenerationContext(options={"command": ["true"]}, backend_name="cpu")
    with pytest.raises(AgentFailed, match="exit status 0 and wrote no kernel.py"):
        CommandMethod().generate(registry.operator("aten.neg"),
                                 registry.backend("cpu").quirks, ctx)


def test_stream_json_without_a_result_line_sums_each_message_once():
    lines = [
        "not json",
        json.dumps({"type": "assistant", "message": {"id": "a", "usage": {
            "input_tokens": 1, "cache_read_input_tokens": 10, "output_tokens": 5}}}),
        # the same message again (one line per content block): counted once
        json.dumps({"type": "assistant", "message": {"id": "a", "usage": {
            "input_tokens": 1, "cache_read_input_tokens": 10, "output_tokens": 5}}}),
        json.dumps({"usage": {"input_tokens": 100, "cache_creation_input_tokens": 7,
                              "output_tokens": 50}}),
        json.dumps([1, 2]),
    ]
    usage = parse_stream_json("\n".join(lines))
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cost_usd) == (118, 55, None)
    assert parse_stream_json("hello\n{\"type\": \"system\"}\n") is None


def test_a_direct_call_gets_the_same_type_check_as_a_sweep():
    """generate() and samples() read options a sweep has not checked when called directly:
    they get the core's check of the declared options too."""
    from kgb_methods.command import parse_options

    with pytest.raises(UserError, match="option workdir_root takes a string, got 3"):
        parse_options({"command": ["true"], "workdir_root": 3})
