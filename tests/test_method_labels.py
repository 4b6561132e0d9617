"""Method labels (kgb_core/labels.py): two models run through one plugin are two methods of the
report, beside a third label of another plugin, in one store, resumed, merged, and in stores
written before labels existed; the leaderboard, --compare and kgb runs built on them.

The runs are real `kgb run`s on the CPU backend: the files method over JSONL answers (two
"models") and the reference method; the store is read back with plain SQL where the test
checks what was stored."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from html import unescape

import pytest

from conftest import KERNELS, kgb

from kgb_core.errors import UserError
from kgb_core.labels import check_label, clean_label, default_label, plan_label
from kgb_core.plugins import load_registry

OPS = ("aten.relu", "aten.neg")


# -- deriving a label --------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "options", "label"), [
    ("reference", {}, "reference"),
    ("llm", {"model": "gpt-4o", "temperature": 0.2}, "llm/gpt-4o"),
    ("agent", {"model": "claude-sonnet-4", "max_turns": 3}, "agent/claude-sonnet-4"),
    ("command", {"command": "claude -p --output-format stream-json"}, "command/claude"),
    ("command", {"command": ["/usr/local/bin/codex", "exec"]}, "command/codex"),
    ("command", {"preset": "ako4all", "command": "claude"}, "command/ako4all"),
    ("files", {"path": "/data/answers/model-b.jsonl"}, "files/model-b"),
    ("files", {"path": "submissions/team one/"}, "files/team-one"),
    ("llm", {"model": None}, "llm"),
])
def test_a_label_names_the_plugin_and_what_sets_the_run_apart(method, options, label):
    assert default_label(method, options) == label


def test_a_given_label_wins_and_a_bad_one_is_refused():
    assert plan_label({"method": "llm", "method_options": {"model": "m"},
                       "label": "gpt-class"}) == "gpt-class"
    assert plan_label({"method": "llm", "method_options": {"model": "m"}}) == "llm/m"
    assert check_label("llm/gpt-4o@temp0.7", "run.toml") == "llm/gpt-4o@temp0.7"
    for bad in ("", "   ", "two words", "x" * 200, 7):
        with pytest.raises(UserError):
            check_label(bad, "run.toml")
    assert clean_label("  a  b\tc ") == "a-b-c"


# -- two models through one plugin ---------------------------------------------------------------
def _answers(path, registry, right: bool):
    """A JSONL of answers to OPS: the reference kernels, or a kernel with wrong values."""
    lines = []
    for op in OPS:
        code = (registry.operator(op).reference_kernel() if right
                else (KERNELS / "add_wrong_values.py").read_text())
        lines.append(json.dumps({"op": op, "answer": f"```python\n{code}```\n",
                                 "prompt_tokens": 100, "completion_tokens": 50}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(tmp_path, db, answers, *extra_method_lines, resume=False):
    config = tmp_path / f"{answers.stem}.toml"
    config.write_text(f'[run]\nops = {json.dumps(list(OPS))}\nbackend = "cpu"\n'
                      f'[method]\nname = "files"\npath = "{answers}"\n'
                      + "".join(line + "\n" for line in extra_method_lines)
                      + '[evaluation]\nseeds = [0]\ntiming = false\n')
    done = kgb("run", "--config", str(config), "--db", str(db),
               *(["--resume"] if resume else []))
    assert done.returncode == 0, done.stderr
    return done


def _summary(db):
    report = json.loads(kgb("report", "--db", str(db), "--json").stdout)
    return {row["method"]: row for row in report["summary"]}


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    registry = load_registry()
    tmp_path = tmp_path_factory.mktemp("labels")
    right = _answers(tmp_path / "model-a.jsonl", registry, right=True)
    wrong = _answers(tmp_path / "model-b.jsonl", registry, right=False)
    db = tmp_path / "both.db"
    _run(tmp_path, db, right)
    _run(tmp_path, db, wrong)
    ops = [arg for op in OPS for arg in ("--op", op)]
    done = kgb("run", "--method", "reference", "--backend", "cpu", "--no-timing", "--seed", "0",
               *ops, "--db", str(db))
    assert done.returncode == 0, done.stderr
    # A third model in a store of its own, its label given in its config: relu right, neg wrong.
    mixed = tmp_path / "model-c.jsonl"
    mixed.write_text(right.read_text().splitlines()[0] + "\n"
                     + wrong.read_text().splitlines()[1] + "\n")
    other = tmp_path / "c-only.db"
    _run(tmp_path, other, mixed, f'label = "{GIVEN}"')
    return {"tmp": tmp_path, "db": db, "right": right, "wrong": wrong, "other": other}


LABELS = {"files/model-a", "files/model-b", "reference"}
GIVEN = "model-c@given"  # the third model's label, given outright


@pytest.fixture(scope="module")
def report_json(two_models):
    """`kgb report --json` of the two models' store, as the runs left it (read by two tests)."""
    done = kgb("report", "--db", str(two_models["db"]), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def written_report(two_models, tmp_path_factory):
    """`kgb report --html --md --csv` of the two models' store: the files and the run."""
    folder = tmp_path_factory.mktemp("written")
    html, md, csv_dir = folder / "r.html", folder / "r.md", folder / "csv"
    done = kgb("report", "--db", str(two_models["db"]), "--html", str(html), "--md", str(md),
               "--csv", str(csv_dir))
    return {"done": done, "html": html, "md": md, "csv": csv_dir}


def test_two_models_of_one_plugin_keep_their_rows(two_models, report_json):
    summary = {row["method"]: row for row in report_json["summary"]}
    assert set(summary) == LABELS
    assert summary["files/model-a"]["correct"] == summary["reference"]["correct"] == len(OPS)
    assert summary["files/model-b"]["correct"] == 0
    conn = sqlite3.connect(two_models["db"])
    stored = dict(conn.execute("SELECT label, COUNT(*) FROM results GROUP BY label"))
    assert stored == {label: len(OPS) for label in LABELS}
    assert {r[0] for r in conn.execute("SELECT label FROM runs")} == set(stored)


def test_every_view_keeps_both_labels(two_models, report_json):
    report = report_json
    views, labels = report["views"], LABELS
    per_op = {(row["op"], row["method"]) for row in views["operators"]}
    assert per_op == {(op, label) for op in OPS for label in labels}
    for view in ("ms", "mc", "cost", "summary", "runs"):
        assert {row["method"] for row in views[view]} == labels, view
    assert {row["label"] for row in report["runs"]} == labels
    assert {matrix["method"] for matrix in views["transfer"]} == labels
    text = kgb("report", "--db", str(two_models["db"]), "--per-op").stdout
    assert all(label in text for label in labels)


def test_resume_continues_the_labelled_run(two_models):
    tmp_path, db = two_models["tmp"], two_models["db"]
    done = _run(tmp_path, db, two_models["right"], resume=True)
    # nothing left to do: said so, and no judge started for it
    assert "is complete; all 2 operators already done" in done.stderr
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM results WHERE label='files/model-a'"
                        ).fetchone()[0] == len(OPS)


def test_a_label_given_in_the_config_is_the_methods_name(two_models, tmp_path):
    assert set(_summary(two_models["other"])) == {GIVEN}
    config = tmp_path / "bad.toml"
    config.write_text(f'[method]\nname = "files"\npath = "{two_models["right"]}"\n'
                      f'label = "two words"\n')
    done = kgb("run", "--config", str(config), "--db", str(tmp_path / "bad.db"))
    assert done.returncode == 2 and "label" in done.stderr


def _as_schema_4(db):
    """The store as kgb wrote it before labels: no label columns, schema version 4."""
    conn = sqlite3.connect(db)
    conn.execute("DROP INDEX IF EXISTS results_by_label")
    conn.execute("ALTER TABLE results DROP COLUMN label")
    conn.execute("ALTER TABLE runs DROP COLUMN label")
    conn.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    conn.commit()
    conn.close()


def test_an_older_store_is_labelled_from_its_runs_plans(two_models, tmp_path):
    old = tmp_path / "old.db"
    sqlite3.connect(two_models["db"]).backup(sqlite3.connect(old))
    _as_schema_4(old)
    assert "label" not in {r[1] for r in sqlite3.connect(old).execute(
        "PRAGMA table_info(results)")}
    summary = _summary(old)  # opening it upgrades it in place
    assert set(summary) == LABELS
    conn = sqlite3.connect(old)
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "5"
    assert conn.execute("SELECT COUNT(*) FROM results WHERE label=''").fetchone()[0] == 0


def test_merge_keeps_each_label_and_labels_an_older_input(two_models, tmp_path):
    other = two_models["other"]
    old = tmp_path / "old.db"
    sqlite3.connect(two_models["db"]).backup(sqlite3.connect(old))
    _as_schema_4(old)
    merged = tmp_path / "merged.db"
    done = kgb("merge", str(old), str(other), "-o", str(merged))
    assert done.returncode == 0, done.stderr
    summary = _summary(merged)
    assert set(summary) == LABELS | {GIVEN}
    assert summary[GIVEN]["correct"] == 1
    again = kgb("merge", str(two_models["db"]), "-o", str(merged), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["results_added"] == 0  # the same rows, labelled alike


# -- the leaderboard, against numbers worked out by hand -----------------------------------------
def _row(op, label, verdict, sample=0, speedup=None, tokens=100, cost=0.01):
    return {"op": op, "source": op.split(".")[0], "method": label.split("/")[0], "label": label,
            "backend": "nvidia", "emulates": "", "sample": sample, "verdict": verdict,
            "speedup": speedup, "prompt_tokens": tokens, "completion_tokens": 0,
            "cost_usd": cost, "timing_label": "cuda-events+l2-flush" if speedup else "",
            "generation": None}


def test_the_leaderboard_ranks_labels_with_hand_computed_numbers():
    from kgb_core.reports.leaderboard import leaderboard

    rows = [_row("aten.x", "llm/a", "pass", speedup=2.0),
            _row("aten.y", "llm/a", "wrong_output", sample=0),
            _row("aten.y", "llm/a", "pass", sample=1, speedup=0.5),
            _row("vllm.z", "llm/a", "wrong_output", sample=0),
            _row("vllm.z", "llm/a", "compile_error", sample=1),
            _row("aten.x", "llm/b", "pass", speedup=3.0, tokens=50, cost=0.5)]
    first, second = leaderboard(rows)
    assert (first.rank, first.method, second.rank, second.method) == (1, "llm/b", 2, "llm/a")
    a = second.all
    assert (a.operators, a.correct, a.k) == (3, 2, 2)
    assert a.correct_pct == pytest.approx(200 / 3)
    assert a.pass_at_1 == pytest.approx(1 / 3) and a.pass_at_k == pytest.approx(2 / 3)
    assert a.fast_1 == pytest.approx(1 / 3)             # aten.x alone is faster than 1x
    assert a.speedup_geomean == pytest.approx(1.0)      # sqrt(2.0 * 0.5)
    assert a.tokens_per_solved == pytest.approx(500 / 2)
    assert a.cost_per_solved == pytest.approx(0.05 / 2)
    assert set(second.sources) == {"aten", "vllm"}
    aten, vllm = second.sources["aten"], second.sources["vllm"]
    assert (aten.operators, aten.correct_pct, aten.pass_at_1) == (2, 100.0, 0.5)
    assert aten.tokens_per_solved == pytest.approx(300 / 2)
    assert (vllm.operators, vllm.correct_pct, vllm.tokens_per_solved) == (1, 0.0, None)
    b = first.all
    assert (b.operators, b.correct_pct, b.cost_per_solved) == (1, 100.0, 0.5)
    assert b.speedup_geomean == pytest.approx(3.0)
    assert first.kind == "hardware" and "vllm" not in first.sources


def test_the_leaderboard_is_the_reports_first_view(written_report):
    done, html, md = written_report["done"], written_report["html"], written_report["md"]
    csv_dir = written_report["csv"]
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.index("leaderboard") < text.index("source  method")
    board = text.split("\n\n")[0]
    assert board.index("files/model-a") < board.index("files/model-b")  # ranked
    assert board.index("reference") < board.index("files/model-b")
    page = html.read_text()
    assert page.index('id="leaderboard"') < page.index('id="ms-view"')
    assert 'id="table-leaderboard" class="sortable" data-filter="method,backend,kind"' in page
    assert 'data-filter="method,source,backend,verdicts"' in page
    assert md.read_text().index("Leaderboard") < md.read_text().index("MS view")
    with open(csv_dir / "leaderboard.csv") as handle:
        header = handle.readline()
    assert header.startswith("rank,method,backend,kind,k,all ops,all correct %")


# -- comparing two labels, listing runs ----------------------------------------------------------
def test_compare_puts_the_differences_first(two_models, tmp_path):
    db = tmp_path / "all.db"
    assert kgb("merge", str(two_models["db"]), str(two_models["other"]), "-o",
               str(db)).returncode == 0
    done = kgb("report", "--db", str(db), "--compare", GIVEN, "files/model-a", "--json")
    assert done.returncode == 0, done.stderr
    compared = json.loads(done.stdout)
    assert compared["counts"] == {"both": 1, "only A": 0, "only B": 1, "neither": 0}
    assert [(o["op"], o["solved"]) for o in compared["operators"]] == [
        ("aten.neg", "only B"), ("aten.relu", "both")]
    text = kgb("report", "--db", str(db), "--compare", GIVEN, "files/model-a").stdout
    assert "only B 1" in text
    # a store file with one label is a side too; one with several is refused with the fix
    other = two_models["other"]
    done = kgb("report", "--db", str(two_models["db"]), "--compare", str(other),
               "files/model-a", "--json")
    assert json.loads(done.stdout)["a"] == GIVEN
    refused = kgb("report", "--db", str(other), "--compare", str(two_models["db"]), "x")
    assert refused.returncode == 2 and "3 method labels" in refused.stderr


def test_runs_lists_each_run_with_its_label(two_models):
    done = kgb("runs", "--db", str(two_models["db"]), "--json")
    assert done.returncode == 0, done.stderr
    listed = {r["label"]: r for r in json.loads(done.stdout)}
    assert set(listed) == LABELS
    assert listed["files/model-a"]["passed"] == len(OPS)
    assert listed["files/model-b"]["results"] == len(OPS) and listed["files/model-b"]["passed"] == 0
    assert listed["files/model-a"]["method"] == "files"
    text = kgb("runs", "--db", str(two_models["db"])).stdout
    assert "files/model-a" in text and "planned ops" in text


def test_a_label_in_a_file_name_has_no_slash():
    from kgb_core.labels import file_stem

    assert file_stem("llm/gpt-4o") == "llm_gpt-4o" and file_stem("reference") == "reference"


ACTIONS = """<script>
window.addEventListener('load', function () {
  var errors = [];
  try {
    var board = document.getElementById('table-leaderboard');
    var header = Array.prototype.filter.call(board.tHead.rows[0].cells, function (c) {
      return c.textContent === 'all correct %'; })[0];
    var first = function () { return board.tBodies[0].rows[0].cells[1].textContent; };
    var before = first();
    header.click(); var ascending = first();
    header.click(); var descending = first();
    var ops = document.getElementById('table-operators');
    var bar = ops.previousElementSibling;
    var verdicts = bar.querySelector('select[data-column="verdicts"]');
    verdicts.value = 'pass'; verdicts.dispatchEvent(new Event('change'));
    var visible = function () { return Array.prototype.filter.call(ops.tBodies[0].rows,
      function (r) { return !r.hidden; }).map(function (r) { return r.cells[2].textContent; }); };
    var passing = visible(), counted = bar.querySelector('.filter-count').textContent;
    verdicts.value = ''; verdicts.dispatchEvent(new Event('change'));
    var text = bar.querySelector('input'); text.value = 'model-b';
    text.dispatchEvent(new Event('input'));
    var typed = visible();
  } catch (e) { errors.push(String(e)); }
  document.documentElement.setAttribute('data-check', JSON.stringify({
    errors: errors, before: before, ascending: ascending, descending: descending,
    sorted: header && header.getAttribute('aria-sort'), passing: passing, counted: counted,
    typed: typed}));
});
</script>"""


def test_the_html_tables_sort_and_filter_in_a_real_browser(written_report, tmp_path):
    from test_reports import BROWSER_FLAGS, _chromium

    if _chromium() is None:
        pytest.skip("no chromium binary on PATH (scripts/setup_test_tools.sh installs it)")
    html = written_report["html"]  # the page `kgb report --html` wrote for the leaderboard test
    assert written_report["done"].returncode == 0, written_report["done"].stderr
    checked = tmp_path / "checked.html"
    checked.write_text(html.read_text().replace("</body>", ACTIONS + "</body>", 1))
    dom = subprocess.run([_chromium(), *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'p'}",
                          "--virtual-time-budget=5000", "--dump-dom", checked.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'data-check="([^"]*)"', dom.stdout)
    assert found, dom.stdout[:500]
    check = json.loads(unescape(found.group(1)))
    assert check["errors"] == []
    assert (check["before"], check["ascending"], check["descending"]) == (
        "files/model-a", "files/model-b", "files/model-a")
    assert check["sorted"] == "descending"
    assert sorted(check["passing"]) == ["files/model-a"] * len(OPS) + ["reference"] * len(OPS)
    assert check["counted"] == f"{2 * len(OPS)} of {3 * len(OPS)} rows"
    assert check["typed"] == ["files/model-b"] * len(OPS)
