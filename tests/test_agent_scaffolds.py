"""Kernel-optimisation scaffolds laid out by the command method (kgb_methods/scaffolds.py): each
example config (examples/agents/) run by a real `kgb run` over a stand-in checkout of the
scaffold made here and a stand-in Claude Code first on PATH (tests/agents/stub_cli.py), which
writes its kernel where the scaffold keeps it and runs the scaffold's bench step."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from conftest import KERNELS, REPO, kgb
from kgb_core.errors import UserError
from kgb_methods.command import CommandMethod, parse_options
from kgb_methods.scaffolds import SCAFFOLDS, bench_script

STUB = REPO / "tests" / "agents" / "stub_cli.py"
OP = "aten.relu"
# scaffold -> (the variable its example reads, files of a checkout, where the kernel lands)
CHECKOUTS = {
    "autokernel": ("AUTOKERNEL_DIR", {"program.md": "# autokernel\nRun uv run bench.py.\n",
                                      "bench.py": "# upstream bench\n",
                                      "reference.py": "# upstream references\n",
                                      "kernel.py": "KERNEL_TYPE = 'matmul'\n"}, "kernel.py"),
    "ako4all": ("AKO4ALL_DIR", {"TASK.md": "# Task\nFollow the loop.\n", "HINTS.md": "hints\n",
                                "bench-wrapper.sh": "#!/bin/sh\n{{BENCH_COMMAND}}\n",
                                "bench/kernelbench/bench.py": "# upstream bench\n"},
                "solution/kernel.py"),
    "cuda-optimized-skill": ("CUDA_OPTIMIZED_SKILL_DIR", {
        "skills/optimized-skill/operator-optimize-loop/SKILL.md": "---\nname: loop\n---\n",
        "skills/optimized-skill/kernel-benchmark/SKILL.md": "---\nname: bench\n---\n"},
        "kernel.py"),
}


def _checkout(folder, files):
    """A stand-in checkout; its first file is a link, as a checkout may hold one: the work
    folder gets a copy, so nothing kgb or the agent writes reaches the checkout."""
    for index, (name, text) in enumerate(files.items()):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if index == 0:
            target = folder.parent / f"linked-{path.name}"
            target.write_text(text)
            path.symlink_to(target)
        else:
            path.write_text(text)
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return folder


@pytest.fixture(scope="module")
def claude_on_path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bin")
    wrapper = folder / "claude"
    wrapper.write_text(f"#!/bin/sh\nKGB_STUB_NAME=claude exec {sys.executable} {STUB} \"$@\"\n")
    wrapper.chmod(0o755)
    return folder


@pytest.mark.parametrize("scaffold", sorted(CHECKOUTS))
def test_each_scaffold_is_laid_out_and_its_agent_run(scaffold, claude_on_path, tmp_path,
                                                     registry):
    variable, files, kernel_path = CHECKOUTS[scaffold]
    checkout = _checkout(tmp_path / "checkout", files)
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    # AutoKernel's run covers a second operator, whose kernel is wrong: a verdict per operator.
    ops = (OP, "aten.neg") if scaffold == "autokernel" else (OP,)
    (kernels / f"{OP}.py").write_text(registry.operator(OP).reference_kernel())
    (kernels / "aten.neg.py").write_text((KERNELS / "add_wrong_values.py").read_text())
    root = tmp_path / "workdirs"
    config = tmp_path / "run.toml"  # the example as shipped, its work folder kept to look into
    config.write_text((REPO / "examples" / "agents" / f"{scaffold}.toml").read_text().replace(
        'keep_workdirs = "failed"', f'keep_workdirs = true\nworkdir_root = "{root}"'))
    db = tmp_path / "r.db"
    # The bench step is a whole `kgb eval`: one scaffold's agent runs it.
    runs = f"{OP}=1" if scaffold == "ako4all" else ""
    done = kgb("run", "--config", str(config), "--backend", "cpu", "--no-timing", "--seed", "0",
               "--db", str(db), *[arg for op in ops for arg in ("--op", op)],
               env={"PATH": f"{claude_on_path}{os.pathsep}{os.environ['PATH']}",
                    variable: str(checkout), "KGB_TEST_KERNEL_DIR": str(kernels),
                    "KGB_TEST_EVAL_RUNS": runs})
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    rows = {row["op"]: row for row in conn.execute("SELECT * FROM results")}
    assert sorted(rows) == sorted(ops)
    if scaffold == "autokernel":
        assert rows.pop("aten.neg")["verdict"] == "runtime_error"
    (row,) = rows.values()
    assert row["verdict"] == "pass"  # the kernel was taken from where the scaffold keeps it
    assert row["label"] == f"command/{scaffold}/claude-code"
    assert (row["prompt_tokens"], row["completion_tokens"]) == (4100, 450)
    assert row["cost_usd"] == pytest.approx(0.0375)
    generation = json.loads(row["generation"])
    assert generation["scaffold"] == scaffold and generation["iterations"] == 5
    assert generation["evaluator_calls"] == (1 if runs else 0)
    # The kickoff is the scaffold's, in place of the preset's.
    prompt = generation["command"][generation["command"].index("-p") + 1]
    assert prompt == SCAFFOLDS[scaffold].prompt(registry.operator(OP), 5)
    report = json.loads(kgb("report", "--db", str(db), "--json").stdout)
    (summary,), (cost,) = report["summary"], report["views"]["cost"]
    assert summary["method"] == f"command/{scaffold}/claude-code"
    assert summary["tokens"] == len(ops) * (4100 + 450)
    assert cost["solved"] == 1
    seconds = [json.loads(g)["seconds"] for (g,) in conn.execute("SELECT generation FROM results")]
    assert cost["generation_s"] == pytest.approx(sum(seconds))
    (workdir,) = [folder for folder in root.iterdir() if folder.name.startswith(OP)]
    assert (workdir / kernel_path).is_file() and (workdir / "KGB_TASK.md").is_file()
    assert not (workdir / ".git").exists()  # the checkout's history stays where it is
    assert all((workdir / name).is_file() for name in files)
    assert not any((workdir / name).is_symlink() for name in files)
    first, text = next(iter(files.items()))  # the linked file (program.md, TASK.md...)
    assert (checkout / first).read_text() == text  # the checkout is as it was
    bench = workdir / SCAFFOLDS[scaffold].bench_file
    assert "harness's evaluator" in bench.read_text()  # kgb's, in the scaffold's place
    if scaffold == "autokernel":
        assert "## This workspace (laid out by kgb" in (workdir / "program.md").read_text()
        assert "aten.relu" in (workdir / "reference.py").read_text()
    if scaffold == "ako4all":
        assert (workdir / "input" / "kernel.py").is_file()
        guide = (workdir / "bench" / "GUIDE.md").read_text()
        assert "python bench/kgb/bench.py solution/kernel.py" in guide
        assert (workdir / "TASK.md").read_text() == files["TASK.md"]  # AKO4ALL's own, kept
        log = (workdir / "stub-bench.log").read_text()
        assert "exit 0" in log and "CORRECT: True" in log and "VERDICT: pass" in log
    if scaffold == "cuda-optimized-skill":  # optimise-only: kgb's reference kernel to start
        assert (workdir / "kernel_original.py").read_text() == \
            registry.operator(OP).reference_kernel()


@pytest.mark.parametrize("style, verdict, expected", [
    ("autokernel", "pass", ["correctness: PASS", "speedup_vs_pytorch: 1.250x"]),
    ("autokernel", "wrong_output", ["correctness: FAIL", "VERDICT: wrong_output"]),
    ("ako4all", "pass", ["COMPILED: True", "CORRECT: True", "RUNTIME: 0.0800",
                         "REF_RUNTIME: 0.1000", "SPEEDUP: 1.250"]),
    ("ako4all", "compile_error", ["COMPILED: False", "CORRECT: False"]),
    ("skill", "pass", ["Correctness: PASS", "Median: 0.0800 ms", "Speedup: 1.250x vs reference"]),
])
def test_bench_scripts_print_kgbs_verdict_in_the_scaffolds_format(style, verdict, expected,
                                                                   tmp_path):
    result = {"verdict": verdict, "candidate_ms": 0.08, "reference_ms": 0.1,
              "speedup": 1.25 if verdict == "pass" else None, "message": ""}
    fake_eval = [sys.executable, "-c", "import json, sys; print(json.dumps(%r)); "
                 "assert sys.argv[1].endswith('k.py') and sys.argv[2:] == ['--no-timing']"
                 % result, "KERNEL"]
    bench = tmp_path / "bench" / "kgb" / "bench.py"
    bench.parent.mkdir(parents=True)
    bench.write_text(bench_script(style, "k.py", "bench/kgb/bench.py", fake_eval, ".calls"))
    done = subprocess.run([sys.executable, str(bench), "--no-timing"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == (0 if verdict == "pass" else 1), done.stderr
    assert all(line in done.stdout.splitlines() for line in expected), done.stdout
    assert (tmp_path / ".calls").read_text() == "run\n"  # counted in the work folder


def test_a_scaffold_needs_a_checkout_of_it(tmp_path, monkeypatch):
    with pytest.raises(UserError, match="needs scaffold_dir, your checkout of https://github"):
        parse_options({"scaffold": "ako4all", "command": ["true"]})
    with pytest.raises(UserError, match="has no TASK.md: is it a checkout of"):
        parse_options({"scaffold": "ako4all", "scaffold_dir": str(tmp_path),
                       "command": ["true"]})
    monkeypatch.delenv("AKO4ALL_DIR", raising=False)
    with pytest.raises(UserError, match="names a variable that is not set"):
        parse_options({"scaffold": "ako4all", "scaffold_dir": "${AKO4ALL_DIR}",
                       "command": ["true"]})
    with pytest.raises(UserError, match="unknown scaffold 'autokernal'"):
        parse_options({"scaffold": "autokernal", "command": ["true"]})
    with pytest.raises(UserError, match="scaffold_dir needs a scaffold"):
        parse_options({"scaffold_dir": str(tmp_path), "command": ["true"]})
    with pytest.raises(UserError, match="baseline must be one of starter, reference"):
        parse_options({"command": ["true"], "baseline": "best"})
    (tmp_path / "TASK.md").write_text("x")
    monkeypatch.setenv("AKO4ALL_DIR", str(tmp_path))
    options = parse_options({"scaffold": "ako4all", "scaffold_dir": "${AKO4ALL_DIR}",
                             "command": ["true"]})
    assert options["scaffold_dir"] == str(tmp_path.resolve())
    assert CommandMethod().label({"scaffold": "ako4all", "preset": "codex"}) == \
        "command/ako4all/codex"


def test_the_starting_kernel_is_the_reference_only_where_there_is_one(registry):
    import dataclasses

    from kgb_methods.scaffolds import starting_kernel

    relu = registry.operator(OP)
    assert starting_kernel(relu, "reference") == relu.reference_kernel()
    for op, baseline in ((relu, "starter"),
                         (dataclasses.replace(relu, reference_kernel=None), "reference")):
        stub = starting_kernel(op, baseline)
        assert "raise NotImplementedError" in stub and "KGB_TASK.md" in stub
