"""Source options (kgb_core/source_options.py): `[sources.<name>]` and `--source-opt`, refused
when unknown, applied in the harness and in every judge alike, recorded in the run's plan.
The source under test (tests/kgb_test_sources.py) makes aten.neg with one case of the shape
its option gives."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from conftest import TESTS, kgb
from kgb_core.errors import UserError
from kgb_core.operators import OperatorSource
from kgb_core.source_options import merged, parse_assignments

ENV = {"KGB_EXTRA_PLUGINS": "kgb_test_sources",
       "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}


def test_assignments_read_toml_values_and_refuse_what_is_no_assignment():
    assert parse_assignments(["kernelbench.path=/data/level 1", "shaped.shape=[3, 5]",
                              "x.flag=true", "x.n=7"]) == {
        "kernelbench": {"path": "/data/level 1"}, "shaped": {"shape": [3, 5]},
        "x": {"flag": True, "n": 7}}
    for bad in ("shaped", "shape=[1]", "shaped.=1", ".shape=1"):
        with pytest.raises(UserError, match="give NAME.KEY=VALUE"):
            parse_assignments([bad])
    assert merged({"a": {"k": 1, "j": 2}}, {"a": {"k": 3}}) == {"a": {"k": 3, "j": 2}}


def test_a_source_takes_only_the_options_it_declares():
    built = []
    source = OperatorSource("s", "d", build=lambda path=".": built.append(path) or [],
                            options={"path": "."})
    source.operators()
    source.configure({"path": "/x"})
    source.operators()
    assert built == [".", "/x"]
    with pytest.raises(UserError, match="has no option 'pth' \\(did you mean 'path'\\?\\)"):
        source.configure({"pth": "/y"})
    plain = OperatorSource("t", "d", build=lambda: [])
    with pytest.raises(UserError, match="has no option 'path'; it takes none"):
        plain.configure({"path": "/y"})


def test_ops_lists_the_operators_the_options_make():
    done = kgb("ops", "--source", "shaped", "--source-opt", "shaped.shape=[3, 5]", "--json",
               env=ENV)
    assert done.returncode == 0, done.stderr
    (op,) = json.loads(done.stdout)
    assert op["id"] == "shaped.neg" and op["cases"][0]["params"] == {"shape": [3, 5]}
    wrong = kgb("ops", "--source", "shaped", "--source-opt", "shaped.shap=[3]", env=ENV)
    assert wrong.returncode != 0 and "did you mean 'shape'" in wrong.stderr
    unknown = kgb("ops", "--source-opt", "kernelbenc.path=/x", env=ENV)
    assert unknown.returncode != 0 and "not an installed source" in unknown.stderr


def test_a_run_and_its_judge_use_the_options_and_the_plan_records_them(tmp_path):
    config = tmp_path / "run.toml"
    config.write_text('[run]\nsources = ["shaped"]\n\n[sources.shaped]\nshape = [4, 4]\n')
    db = tmp_path / "r.db"
    # The command line wins over the file, key by key.
    done = kgb("run", "--config", str(config), "--source-opt", "shaped.shape=[3, 7]",
               "--backend", "cpu", "--no-timing", "--seed", "0", "--db", str(db), env=ENV)
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(db)
    (verdict, detail), = conn.execute("SELECT verdict, detail FROM results").fetchall()
    assert verdict == "pass"
    # The judge checked the operator the options make: its case has the shape given.
    shown = [case for case in json.loads(detail)["cases"] if not case["heldout"]]
    assert {tuple(case["params"]["shape"]) for case in shown} == {(3, 7)}
    (plan,), = conn.execute("SELECT plan FROM runs").fetchall()
    assert json.loads(plan)["source_options"] == {"shaped": {"shape": [3, 7]}}
    # Other options are another run, never resumed into this one.
    again = kgb("run", "--config", str(config), "--backend", "cpu", "--no-timing", "--seed",
                "0", "--db", str(db), "--resume", env=ENV)
    assert again.returncode == 0, again.stderr
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone() == (2,)


def test_an_agents_eval_sh_passes_the_source_options_on(tmp_path, monkeypatch):
    """The command method's eval.sh runs `kgb eval` itself: without the run's source options
    the operator there would be another one."""
    import subprocess

    import kgb_test_sources
    from kgb_core.plugins import load_registry
    from kgb_core.source_options import configure
    from kgb_methods.command import write_workdir

    options = {"shaped": {"shape": [3, 7]}}
    registry = load_registry(extra=[("kgb_test_sources", kgb_test_sources)])
    configure(registry, options)
    op = registry.operator("shaped.neg")
    write_workdir(tmp_path, op, registry.backend("cpu").quirks, "cpu", 60,
                  source_options=options)
    assert "--source-opt 'shaped.shape=[3, 7]'" in (tmp_path / "eval.sh").read_text()
    (tmp_path / "kernel.py").write_text(registry.operator("aten.neg").reference_kernel())
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    done = subprocess.run(["./eval.sh", "--no-timing", "--seed", "0"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    shown = [case for case in result["cases"] if not case["heldout"]]
    assert result["verdict"] == "pass" and {tuple(c["params"]["shape"]) for c in shown} == {(3, 7)}
