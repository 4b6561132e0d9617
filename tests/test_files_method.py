"""The files method: directories and JSONL of kernels made elsewhere, scored and stored."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

from conftest import KERNELS, REPO, kgb


def test_a_directory_of_submissions_is_scored_per_operator(tmp_path, registry):
    submissions = tmp_path / "subs"
    submissions.mkdir()
    (submissions / "aten.neg.py").write_text(registry.operator("aten.neg").reference_kernel())
    (submissions / "aten.add.py").write_text((KERNELS / "add_wrong_values.py").read_text())
    (submissions / "aten.add.sample1.py").write_text(registry.operator("aten.add").reference_kernel())
    config = tmp_path / "run.toml"
    config.write_text(f'[run]\nops = ["aten.neg", "aten.add", "aten.exp"]\nbackend = "cpu"\n'
                      f'[method]\nname = "files"\npath = "{submissions}"\n'
                      f'[evaluation]\nseeds = [0]\ntiming = false\n')
    db = tmp_path / "r.db"
    done = kgb("run", "--config", str(config), "--db", str(db))
    assert done.returncode == 0, done.stderr
    report = json.loads(kgb("report", "--db", str(db), "--json").stdout)
    (summary,) = report["summary"]
    assert summary["method"] == "files/subs" and summary["operators"] == 3  # its label
    assert summary["correct"] == 2  # neg, and add through its second sample (pass@2)
    import sqlite3

    rows = dict(((op, sample), verdict) for op, sample, verdict in sqlite3.connect(db).execute(
        "SELECT op, sample, verdict FROM results"))
    assert rows == {("aten.neg", 0): "pass", ("aten.add", 0): "wrong_output",
                    ("aten.add", 1): "pass", ("aten.exp", 0): "no_candidate"}


def test_jsonl_generations_keep_their_token_counts(tmp_path, registry):
    answer = "Here it is:\n```python\n" + registry.operator("aten.relu").reference_kernel() + "```\n"
    lines = [json.dumps({"op": "aten.relu", "answer": answer, "prompt_tokens": 900,
                         "completion_tokens": 450, "cost_usd": 0.0123})]
    generations = tmp_path / "gens.jsonl"
    generations.write_text("\n".join(lines) + "\n")
    db = tmp_path / "r.db"
    config = tmp_path / "run.toml"
    config.write_text(f'[method]\nname = "files"\npath = "{generations}"\n'
                      f'[evaluation]\nseeds = [0]\ntiming = false\n')
    done = kgb("run", "--config", str(config), "--op", "aten.relu", "--backend", "cpu",
               "--db", str(db))
    assert done.returncode == 0, done.stderr
    (summary,) = json.loads(kgb("report", "--db", str(db), "--json").stdout)["summary"]
    assert summary["correct"] == 1 and summary["tokens"] == 1350
    assert summary["tokens_per_solved"] == 1350 and abs(summary["cost_usd"] - 0.0123) < 1e-9


def test_a_bad_files_path_or_line_is_a_user_error(tmp_path):
    done = kgb("run", "--method", "files", "--op", "aten.relu", "--backend", "cpu",
               "--db", str(tmp_path / "r.db"))
    assert done.returncode == 2 and "needs its path" in done.stderr
    bad = tmp_path / "gens.jsonl"
    bad.write_text('{"sample": 0}\n')
    config = tmp_path / "run.toml"
    config.write_text(f'[method]\nname = "files"\npath = "{bad}"\n')
    done = kgb("run", "--config", str(config), "--op", "aten.relu", "--backend", "cpu",
               "--db", str(tmp_path / "r.db"))
    assert done.returncode == 2 and "gens.jsonl:1" in done.stderr


def test_samples_selects_what_the_file_holds_and_says_what_is_missing(tmp_path, registry):
    right = registry.operator("aten.relu").reference_kernel()
    wrong = (KERNELS / "relu_misses_tail.py").read_text()
    lines = [json.dumps({"op": "aten.relu", "sample": k, "answer": f"```triton\n{code}```"})
             for k, code in enumerate([wrong, wrong, right, wrong, right, wrong])]
    generations = tmp_path / "six.jsonl"
    generations.write_text("\n".join(lines) + "\n")
    config = tmp_path / "run.toml"
    config.write_text(f'[method]\nname = "files"\npath = "{generations}"\n'
                      f'[evaluation]\nseeds = [0]\ntiming = false\n')

    def run(samples):
        db = tmp_path / f"s{samples}.db"
        done = kgb("run", "--config", str(config), "--op", "aten.relu", "--backend", "cpu",
                   "--samples", str(samples), "--db", str(db))
        assert done.returncode == 0, done.stderr
        (summary,) = json.loads(kgb("report", "--db", str(db), "--json").stdout)["summary"]
        return summary, done.stderr

    six, _ = run(6)
    assert (six["k"], six["correct"], six["pass_at_1"]) == (6, 1, 0.0)
    from kgb_core.methods import GenerationContext
    from kgb_methods.files import FilesMethod

    # samples 0 and 1 only (both wrong), at the method: the run above showed the flag reaching it
    two = FilesMethod().generate(registry.operator("aten.relu"), None, GenerationContext(
        options={"path": str(generations), "samples": 2}))
    assert [c.sample for c in two] == [0, 1] and FilesMethod().samples(
        {"path": str(generations), "samples": 2}) == 2
    # asking for more than the file holds: the method takes what there is and says so
    said: list[str] = []
    context = GenerationContext(options={"path": str(generations), "samples": 8},
                                log=said.append)
    taken = FilesMethod().generate(registry.operator("aten.relu"), None, context)
    assert [c.sample for c in taken] == list(range(6))
    assert said == ["method files: six.jsonl holds 6 of samples 0-7 of aten.relu (6 in all); "
                    "pass@8 counts those"]


def test_backendbench_folders_are_candidates_for_kgbs_aten_ops(tmp_path):
    """BackendBench's layout (<op>/<op>_implementation_v<k>.py defining <op>_kernel_impl) reads
    as samples of aten.<op>, called with kgb's positional arguments (docs/backendbench.md)."""
    folder = tmp_path / "generated_kernels" / "relu"
    folder.mkdir(parents=True)
    body = (KERNELS / "relu_backendbench.py").read_text()
    (folder / "relu_implementation_v1.py").write_text(body)
    (folder / "relu_implementation_v2.py").write_text(body.replace("tl.maximum(x, 0.0)", "x"))
    (folder / "relu_notes.py").write_text("# not an implementation file\n")
    config = tmp_path / "run.toml"
    config.write_text(f'[run]\nops = ["aten.relu"]\nbackend = "cpu"\n'
                      f'[method]\nname = "files"\npath = "{folder.parent}"\n'
                      f'[evaluation]\nseeds = [0]\ntiming = false\n')
    db = tmp_path / "r.db"
    done = kgb("run", "--config", str(config), "--db", str(db))
    assert done.returncode == 0, done.stderr
    rows = sqlite3.connect(db).execute(
        "SELECT sample, verdict FROM results ORDER BY sample").fetchall()
    assert rows == [(0, "pass"), (1, "wrong_output")]


def test_the_backendbench_mapping_document_is_current():
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "backendbench_mapping.py"),
                           "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
