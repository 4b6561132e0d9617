"""The gpumode source over the suite's own GPU MODE-style problems (tests/data/gpumode/, written
for kgb, none of GPU MODE's files): task.yml read, listed with its cases, answered both ways
(``kernel(...)`` and ``custom_kernel(data)``), judged by each problem's own
check_implementation in the sandboxed problem host, and cheats caught."""

from __future__ import annotations

import json
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
PROBLEMS = REPO / "tests" / "data" / "gpumode"
ANSWERS = REPO / "tests" / "data" / "gpumode_candidates"
CHEATS = read_corpus(REPO / "tests" / "adversarial" / "gpumode", backend="cpu",
                     sandboxed=find_sandbox().sandboxed)


def kgb(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from kgb_core.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=str(REPO))


@pytest.fixture(scope="module", autouse=True)
def installed():
    if "gpumode" not in load_registry().names("source"):
        pytest.skip("kgb-source-gpumode is not installed (scripts/setup.sh installs every "
                    "distribution under plugins/)")


def test_task_files_read_flow_mappings_and_refuse_what_they_cannot(tmp_path):
    from kgb_source_gpumode.task_file import TaskFileError, read

    path = tmp_path / "task.yml"
    path.write_text(textwrap.dedent("""\
        files:
          - {"name": "utils.py", "source": "../utils.py"}
        description: |
          Two lines
          of text.
        tests:
          - {"size": 127, "seed": 4242, "causal": true}
          - {size: 8, seed: 1, mask: None}
        benchmarks:
          - {"size": 4096, "seed": 9}
        """))
    task = read(path)
    assert task["tests"] == [{"size": 127, "seed": 4242, "causal": True},
                             {"size": 8, "seed": 1, "mask": None}]
    assert task["benchmarks"] == [{"size": 4096, "seed": 9}]
    assert task["description"] == "Two lines\nof text."
    assert task["files"] == [{"name": "utils.py", "source": "../utils.py"}]
    path.write_text("tests:\n  - [127, 4242]\n")
    with pytest.raises(TaskFileError, match="task.yml:2"):
        read(path)


def test_ops_lists_each_problem_folder_with_tests_small_and_benchmarks_large():
    done = kgb("ops", "--source", "gpumode", "--source-opt", "gpumode.path=tests/data/gpumode",
               "--json")
    assert done.returncode == 0, done.stderr
    listed = {op["id"]: op for op in json.loads(done.stdout)}
    assert set(listed) == {"gpumode.vectoradd_py", "gpumode.rowsum_py", "gpumode.scale_out_py"}
    vectoradd = listed["gpumode.vectoradd_py"]
    assert [c["tier"] for c in vectoradd["cases"]] == ["small", "small", "large", "large"]
    assert vectoradd["cases"][0]["params"] == {"size": 127, "seed": 4242}
    assert vectoradd["dtypes"] == ["float16"]
    assert vectoradd["signature"].startswith("kernel(data0, data1)")
    assert listed["gpumode.rowsum_py"]["signature"].startswith("kernel(data)")
    assert listed["gpumode.scale_out_py"]["writes"] == ["data1"]  # the output buffer it holds
    assert all("check_implementation" in op["description"] for op in listed.values())


def test_a_files_run_of_both_answer_shapes_passes(tmp_path):
    answers = {f"gpumode.{path.stem}.py": path.read_text() for path in ANSWERS.glob("*.py")}
    _, rows = files_run(tmp_path, "gpumode", "tests/data/gpumode", answers)
    assert rows == [("gpumode.rowsum_py", 0, "pass"), ("gpumode.scale_out_py", 0, "pass"),
                    ("gpumode.vectoradd_py", 0, "pass")]


@pytest.fixture(scope="module")
def evaluator():
    with source_evaluator("gpumode", PROBLEMS) as made:
        yield made


@pytest.mark.parametrize("cheat", CHEATS, ids=[cheat.name for cheat in CHEATS])
def test_each_cheat_gets_its_verdict_and_the_honest_answer_then_passes(evaluator, cheat):
    finding = screen_source(cheat.text)  # what its header says of the static screen
    assert (finding is not None) == cheat.screen_rejects, finding
    result = evaluator.evaluate(cheat.op, cheat.text)
    assert result.verdict == cheat.expect, f"{result.verdict}: {result.message}"
    honest = evaluator.evaluate(cheat.op, (ANSWERS / f"{cheat.op.split('.')[1]}.py").read_text())
    assert honest.verdict == verdicts.PASS, honest.message


def test_a_draw_ahead_asks_the_problem_host_for_nothing():
    """kgb's judge draws inputs ahead of a step (``InputContext.ahead``) into its own draw cache;
    a task's inputs come from its own ``generate_input`` in the host: nothing to draw then."""
    from kgb_core.operators import InputContext
    from kgb_core.source_options import configure

    registry = load_registry()
    configure(registry, {"gpumode": {"path": str(PROBLEMS)}})
    spec = registry.operator("gpumode.vectoradd_py")
    case = spec.cases[0]
    assert spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "meta", ahead=True)) == []
    assert len(spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu"))) == 2
