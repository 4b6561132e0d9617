"""The kernelbench source over the suite's own KernelBench-format problems (tests/data/kernelbench/,
written for kgb, none of KernelBench's files): listed with their cases, answered both ways
(``kernel(...)`` and ``ModelNew``) end to end, cheats caught, and problem files run only in
the sandboxed problem host."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from problem_sources import files_run, source_evaluator

from kgb_core.adversarial import read_corpus
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.sandbox import find_sandbox
from kgb_core.evaluation.screen import screen_source
from kgb_core.plugins import load_registry

REPO = Path(__file__).resolve().parents[3]
PROBLEMS = REPO / "tests" / "data" / "kernelbench"
ANSWERS = REPO / "tests" / "data" / "kernelbench_candidates"
CHEATS = read_corpus(REPO / "tests" / "adversarial" / "kernelbench", backend="cpu",
                     sandboxed=find_sandbox().sandboxed)
UNSCALABLE = "kernelbench.20_LeakyReLU_literal_shapes"


def kgb(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from kgb_core.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=str(REPO))


@pytest.fixture(scope="module", autouse=True)
def installed():
    if "kernelbench" not in load_registry().names("source"):
        pytest.skip("kgb-source-kernelbench is not installed (scripts/setup.sh installs every "
                    "distribution under plugins/)")


def op_id(stem: str) -> str:
    from kgb_source_kernelbench import operator_name

    return f"kernelbench.{operator_name(Path(stem + '.py'))}"


def test_scaling_keeps_small_integers_and_parity_and_grows_the_heldout_case():
    from kgb_source_kernelbench import problems

    sizes = {"batch_size": 16, "dim": 16383, "kernel_size": 3, "channels": 64}
    small = problems.scaled(sizes, 64)
    assert small["batch_size"] == 16 and small["kernel_size"] == 3  # kept: at most 16
    assert small["dim"] % 2 == 1 and small["dim"] == 257  # odd stays odd
    assert small["channels"] == 8  # never below MIN_SCALED
    heldout = problems.grown(sizes, small)
    assert heldout["dim"] != small["dim"] and heldout["dim"] % 2 == 1
    assert heldout["batch_size"] == 16  # what the small case kept, the held-out one keeps


def test_ops_lists_every_problem_with_its_cases_and_where_it_came_from():
    done = kgb("ops", "--source", "kernelbench", "--source-opt",
               "kernelbench.path=tests/data/kernelbench", "--json")
    assert done.returncode == 0, done.stderr
    listed = {op["id"]: op for op in json.loads(done.stdout)}
    assert set(listed) == {op_id(path.stem) for path in PROBLEMS.glob("*.py")}
    for op in listed.values():
        tiers = [case["tier"] for case in op["cases"]]
        if op["id"] == UNSCALABLE:
            assert tiers == ["large"] and op["heldout_cases"] == 0
            assert "cannot be scaled" in op["description"]
            continue
        assert tiers == ["small", "large"] and op["heldout_cases"] == 1, op["id"]
        small, large = op["cases"]
        assert all(small["params"][k] <= v for k, v in large["params"].items())
        assert "sha256" in op["description"] and "class ModelNew" in op["description"]
        assert any(tag.startswith("sha256:") for tag in op["tags"])
    linear = listed["kernelbench.2_Linear"]
    assert linear["signature"].startswith("kernel(x, linear_weight, linear_bias, ")
    assert linear["cases"][1]["reduce_dim"] == load_sizes("2_Linear")["in_features"]
    batch_norm = listed["kernelbench.33_BatchNorm_training"]
    assert batch_norm["writes"] == ["bn_running_mean", "bn_running_var", "bn_num_batches_tracked"]


def load_sizes(stem: str) -> dict[str, int]:
    """The file's module-level integers, read as text (the test never runs a problem file)."""
    found = re.findall(r"^(\w+) = (\d+)\s*$", (PROBLEMS / f"{stem}.py").read_text(), re.MULTILINE)
    return {name: int(value) for name, value in found}


# The ModelNew answers run here for one problem of each kind of state (weights, buffers
# written in training mode, a convolution's, none); every answer, both shapes, runs in
# benchmarks/kernelbench_checks.py, which is too long for the suite.
MODELNEW_RUN = ("2_Linear", "33_BatchNorm_training", "102_Conv2d_BiasAdd_ReLU", "23_Softmax")


def test_a_files_run_of_both_answer_shapes_passes_and_the_report_shows_the_source(tmp_path):
    answers = {}
    for folder in ANSWERS.iterdir():
        if folder.is_dir():
            answers[f"{op_id(folder.name)}.py"] = (folder / "kernel.py").read_text()
            if folder.name in MODELNEW_RUN:
                answers[f"{op_id(folder.name)}.sample1.py"] = (folder / "modelnew.py").read_text()
    db, rows = files_run(tmp_path, "kernelbench", "tests/data/kernelbench", answers)
    report = json.loads(kgb("report", "--db", str(db), "--json").stdout)
    (summary,) = report["summary"]
    assert summary["source"] == "kernelbench"
    assert summary["skipped"] == 1  # the problem with literal shapes: no small case to run
    assert summary["correct"] == summary["operators"] == len(list(PROBLEMS.glob("*.py"))) - 1
    assert len(rows) == len(list(PROBLEMS.glob("*.py"))) + len(MODELNEW_RUN)
    assert sorted(op for op, sample, _ in rows if sample == 1) == sorted(map(op_id, MODELNEW_RUN))
    assert all(verdict == "pass" for op, _, verdict in rows if op != UNSCALABLE), rows


@pytest.fixture(scope="module")
def evaluator():
    with source_evaluator("kernelbench", PROBLEMS) as made:
        yield made


@pytest.mark.parametrize("cheat", CHEATS, ids=[cheat.name for cheat in CHEATS])
def test_each_cheat_gets_its_verdict_and_the_honest_answer_then_passes(evaluator, cheat):
    finding = screen_source(cheat.text)  # what its header says of the static screen
    assert (finding is not None) == cheat.screen_rejects, finding
    result = evaluator.evaluate(cheat.op, cheat.text)
    assert result.verdict == cheat.expect, f"{result.verdict}: {result.message}"
    folder = next(f for f in ANSWERS.iterdir() if f.is_dir() and op_id(f.name) == cheat.op)
    honest = evaluator.evaluate(cheat.op, (folder / "kernel.py").read_text())
    assert honest.verdict == verdicts.PASS, honest.message


def test_a_timed_eval_times_the_reference_in_the_problem_host():
    done = kgb("eval", "--op", "kernelbench.19_ReLU", "--source-opt",
               "kernelbench.path=tests/data/kernelbench", "--seed", "0", "--json",
               str(ANSWERS / "19_ReLU" / "modelnew.py"))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["verdict"] == "pass", result["message"]
    (timing,) = result["timings"]
    assert timing["reference"]["median_ms"] > 0 and timing["reference"]["label"]


def test_a_problem_file_runs_only_in_the_sandbox_and_a_broken_one_is_no_operator(tmp_path):
    if not find_sandbox().sandboxed:
        pytest.skip("no sandbox here")
    folder = tmp_path / "problems"
    folder.mkdir()
    (folder / "1_ReLU.py").write_text((PROBLEMS / "19_ReLU.py").read_text())
    planted = REPO / "planted_by_a_problem_file.txt"
    (folder / "2_Writes.py").write_text(textwrap.dedent(f"""\
        import pathlib
        pathlib.Path({str(planted)!r}).write_text("escaped")
        """) + (PROBLEMS / "19_ReLU.py").read_text())
    done = kgb("ops", "--source", "kernelbench", "--source-opt",
               f"kernelbench.path={folder}", "--json")
    assert done.returncode == 0, done.stderr
    assert [op["id"] for op in json.loads(done.stdout)] == ["kernelbench.1_ReLU"]
    assert "2_Writes.py is no operator" in done.stderr and "Read-only" in done.stderr
    assert not planted.exists()
    assert not os.path.exists(folder / "escaped")


def test_an_llm_run_over_the_source_prompts_with_the_problem_and_scores_a_modelnew(tmp_path):
    """The llm method end to end on a loopback endpoint: the prompt carries the problem file
    and both answer shapes; the answer echoes the problem's Model first, then gives ModelNew,
    which is the block taken, checked and passed."""
    from chat_server import ChatServer, Reply

    problem = (PROBLEMS / "19_ReLU.py").read_text()
    answer = (f"The problem:\n```python\n{problem}```\nMy kernel:\n```python\n"
              f"{(ANSWERS / '19_ReLU' / 'modelnew.py').read_text()}```\n")
    config = tmp_path / "run.toml"
    with ChatServer([Reply(answer, usage=(900, 300))]) as server:
        config.write_text(textwrap.dedent(f"""\
            [run]
            ops = ["kernelbench.19_ReLU"]
            backend = "cpu"
            [sources.kernelbench]
            path = "tests/data/kernelbench"
            [method]
            name = "llm"
            base_url = "{server.base_url}"
            model = "test-model"
            api_key_env = "KGB_TEST_LLM_KEY"
            [evaluation]
            seeds = [0]
            timing = false
            """))
        db = tmp_path / "r.db"
        done = subprocess.run([sys.executable, "-c", "from kgb_core.cli import main; main()",
                               "run", "--config", str(config), "--db", str(db)],
                              capture_output=True, text=True, timeout=600, cwd=str(REPO),
                              env={**os.environ, "KGB_TEST_LLM_KEY": "sk-loopback"})
    assert done.returncode == 0, done.stderr[-3000:]
    prompt = server.requests[0]["messages"][-1]["content"]
    assert "def get_init_inputs" in prompt and "class ModelNew" in prompt
    with sqlite3.connect(db) as conn:
        (verdict, tokens), = conn.execute("SELECT verdict, completion_tokens FROM results")
    assert (verdict, tokens) == ("pass", 300)


def test_a_draw_ahead_asks_the_problem_host_for_nothing():
    """kgb's judge draws inputs ahead of a step (``InputContext.ahead``) into its own draw cache;
    a problem's inputs come from its own code in the host, so there is nothing to draw then."""
    from kgb_core.operators import InputContext
    from kgb_core.source_options import configure

    registry = load_registry()
    configure(registry, {"kernelbench": {"path": str(PROBLEMS)}})
    spec = registry.operator("kernelbench.2_Linear")
    case = spec.cases[0]
    assert spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "meta", ahead=True)) == []
    drawn = spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu"))
    assert drawn and all(getattr(value, "device", None) is not None for value in drawn[:1])
