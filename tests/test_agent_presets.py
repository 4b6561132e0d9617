"""The command method's presets for coding-agent CLIs (kgb_methods/agent_presets.py), each run
by a real `kgb run` from its example config (examples/agents/) against a stand-in CLI of that
name first on PATH (tests/agents/stub_cli.py): the invocation each CLI documents for headless
runs, its tokens and dollars read from its own output format, the agent's wall time, evaluator
calls and exit reason recorded, the token cap stopping it, and work folders kept on failure."""

from __future__ import annotations

import json
import os
import sqlite3
import sys

import pytest

from conftest import KERNELS, REPO, TESTS, kgb
from kgb_core.errors import UserError
from kgb_methods.agent_presets import PRESETS, apply_preset
from kgb_methods.agent_usage import codex_json, opencode_json, parse_output
from kgb_methods.command import parse_options

STUB = TESTS / "agents" / "stub_cli.py"
OPS = ("aten.relu", "aten.neg")
# preset -> (program, prompt tokens, completion tokens, dollars) per operator, as the stub
# reports them in that CLI's format
EXPECTED = {"claude-code": ("claude", 4100, 450, 0.0375),
            "codex": ("codex", 5000, 500, None),
            "opencode": ("opencode", 4000, 300, 0.005)}


@pytest.fixture(scope="module")
def stub_path(tmp_path_factory):
    """A folder of wrappers named claude, codex and opencode running the stub."""
    folder = tmp_path_factory.mktemp("bin")
    for program in ("claude", "codex", "opencode"):
        wrapper = folder / program
        wrapper.write_text(f"#!/bin/sh\nKGB_STUB_NAME={program} exec {sys.executable} {STUB} "
                           f'"$@"\n')
        wrapper.chmod(0o755)
    return folder


def _kernels(tmp_path, registry, wrong=()):
    folder = tmp_path / "kernels"
    folder.mkdir(exist_ok=True)
    for op in OPS:
        code = ((KERNELS / "add_wrong_values.py").read_text() if op in wrong
                else registry.operator(op).reference_kernel())
        (folder / f"{op}.py").write_text(code)
    return folder


def _run(tmp_path, stub_path, config, env, ops=OPS):
    db = tmp_path / "r.db"
    args = ["run", "--config", str(config), "--backend", "cpu", "--no-timing", "--seed", "0",
            "--db", str(db)]
    for op in ops:
        args += ["--op", op]
    done = kgb(*args, env={"PATH": f"{stub_path}{os.pathsep}{os.environ['PATH']}", **env})
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    rows = {row["op"]: dict(row) for row in conn.execute("SELECT * FROM results")}
    return db, rows


@pytest.mark.parametrize("preset", sorted(EXPECTED))
def test_each_preset_runs_its_cli_and_reads_its_tokens(preset, stub_path, tmp_path, registry):
    program, prompt, completion, dollars = EXPECTED[preset]
    config = REPO / "examples" / "agents" / f"{preset}.toml"
    root = tmp_path / "workdirs"
    local = tmp_path / "run.toml"  # the example as shipped, with a folder to look into
    # One operator each, and a second: for opencode a wrong kernel (its folder kept), for
    # codex an agent that never stops reporting tokens (the cap stops it).
    extra = {"opencode": 'workdir_root = "{root}"',
             "codex": 'workdir_root = "{root}"\nmax_tokens_per_op = 12000'}
    local.write_text(config.read_text().replace(
        'keep_workdirs = "failed"', 'keep_workdirs = "failed"\n' + extra.get(
            preset, 'workdir_root = "{root}"').format(root=root)))
    wrong = ("aten.neg",) if preset == "opencode" else ()
    ops = OPS if preset in ("opencode", "codex") else OPS[:1]
    db, rows = _run(tmp_path, stub_path, local,
                    {"KGB_TEST_KERNEL_DIR": str(_kernels(tmp_path, registry, wrong)),
                     # ./eval.sh is a whole `kgb eval`: run once, by one preset's agent
                     "KGB_TEST_EVAL_RUNS": "aten.relu=1" if preset == "opencode" else "",
                     "KGB_TEST_FLOOD": "aten.neg" if preset == "codex" else ""}, ops=ops)
    if preset == "codex":  # the token cap stopped the flood; its kernel was still judged
        flood = rows.pop("aten.neg")
        generation = json.loads(flood["generation"])
        assert generation["exit_reason"].startswith("token cap (12000 tokens")
        assert generation["seconds"] < 60  # stopped, not waited out
        assert flood["prompt_tokens"] + flood["completion_tokens"] > 12000
        assert flood["verdict"] == "pass"
    for op, row in rows.items():
        assert row["label"] == f"command/{preset}"
        assert (row["prompt_tokens"], row["completion_tokens"]) == (prompt, completion)
        assert row["cost_usd"] == pytest.approx(dollars) if dollars else row["cost_usd"] is None
        generation = json.loads(row["generation"])
        assert generation["preset"] == preset and generation["command"][0].endswith(program)
        assert generation["exit_reason"] == "exited" and generation["seconds"] > 0
        assert generation["evaluator_calls"] == (1 if (op, preset) == ("aten.relu", "opencode")
                                                 else 0)
        assert generation["tokens_source"] == PRESETS[preset].output_format
    assert rows["aten.relu"]["verdict"] == "pass"
    if wrong:
        assert rows["aten.neg"]["verdict"] == "runtime_error"
    # keep_workdirs = "failed": a passing candidate's folder is gone, a failing one's kept
    kept = sorted(folder.name.split(".sample")[0] for folder in root.iterdir())
    assert kept == sorted(wrong)
    report = json.loads(kgb("report", "--db", str(db), "--json").stdout)
    summary, (cost,) = report["summary"], report["views"]["cost"]
    assert [row["method"] for row in summary] == [f"command/{preset}"]
    if preset != "codex":  # (the flood's tokens are whatever it reported when stopped)
        assert summary[0]["tokens"] == len(ops) * (prompt + completion)
    # the cost view: wall time and evaluator calls per solved operator, as recorded
    seconds = sum(json.loads(generation)["seconds"]
                  for (generation,) in sqlite3.connect(db).execute("SELECT generation FROM results"))
    assert cost["generation_s"] == pytest.approx(seconds)
    assert cost["generation_s_per_solved"] == pytest.approx(seconds / cost["solved"])
    calls = 1 if preset == "opencode" else 0  # its relu ran ./eval.sh once, nothing else did
    assert cost["evaluator_calls"] == calls
    assert cost["evaluator_calls_per_solved"] == pytest.approx(calls / cost["solved"])


def test_a_preset_fills_what_is_not_given_and_refuses_what_cannot_be():
    options = apply_preset({"preset": "claude-code", "model": "sonnet"})
    assert options["command"][:2] == ["claude", "-p"] and options["command"][-2:] == [
        "--model", "sonnet"]
    assert options["output_format"] == "claude-stream-json"
    mine = apply_preset({"preset": "codex", "command": ["my-codex"]})
    assert mine["command"] == ["my-codex"] and mine["output_format"] == "codex-json"
    with pytest.raises(UserError, match="unknown preset"):
        apply_preset({"preset": "nope"})
    with pytest.raises(UserError, match="model needs a preset"):
        apply_preset({"command": ["x"], "model": "m"})
    with pytest.raises(UserError, match="output_format"):
        parse_options({"command": [sys.executable], "output_format": "yaml"})


def test_labels_name_the_preset_and_the_model():
    from kgb_methods.command import CommandMethod

    method = CommandMethod()
    assert method.label({"preset": "claude-code"}) == "command/claude-code"
    assert method.label({"preset": "codex", "model": "gpt-5-codex"}) == "command/codex/gpt-5-codex"
    assert method.label({"command": "/opt/bin/my-agent --fast"}) == "command/my-agent"


def test_usage_formats_read_what_each_cli_reports_and_nothing_else():
    codex = "\n".join(json.dumps(r) for r in (
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 4,
                                             "output_tokens": 3}},
        {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 1}}))
    found = codex_json(codex)
    assert (found.prompt_tokens, found.completion_tokens, found.cost_usd) == (15, 4, None)
    opencode = json.dumps({"type": "step_finish", "part": {
        "cost": 0.5, "tokens": {"input": 7, "output": 2, "reasoning": 1,
                                "cache": {"read": 3, "write": 1}}}})
    found = opencode_json(opencode)
    assert (found.prompt_tokens, found.completion_tokens, found.cost_usd) == (11, 3, 0.5)
    assert parse_output(codex, "opencode-json") is None  # the named format only
    assert parse_output(codex, "auto").source == "codex-json"
    assert parse_output("not json\n{\"type\": \"other\"}", "auto") is None
    assert parse_output(codex, "none") is None


def test_generation_effort_is_read_from_each_methods_record_and_never_guessed():
    from kgb_core.report import generation_effort

    assert generation_effort({"generation": json.dumps(
        {"seconds": 12.5, "evaluator_calls": 3})}) == (12.5, 3)
    assert generation_effort({"generation": json.dumps({"latency_s": 2.0})}) == (2.0, None)
    assert generation_effort({"generation": json.dumps(
        {"turns": [{"turn": 1}, {"turn": 2}]})}) == (None, 2)
    assert generation_effort({"generation": None}) == (None, None)
    assert generation_effort({"generation": "not json"}) == (None, None)
