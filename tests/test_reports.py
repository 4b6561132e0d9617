"""`kgb report --html/--md/--csv/--json` from a real store, checked against the store's rows.

The store is made as a user makes one: a reference sweep on the CPU interpreter over ATen,
vLLM and cuBLAS operators, the same kernels with another backend's quirks emulated, a scripted
LLM run against the loopback chat server (right, wrong, broken and missing kernels, with token
counts and prices), and `kgb calibrate`. Expected numbers are recomputed here from the SQLite
rows with plain SQL and Python, not with kgb's report code.
"""

from __future__ import annotations

import base64
import csv
import importlib.util
import json
import math
import re
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter, defaultdict
from html import unescape
from html.parser import HTMLParser

import pytest

from conftest import REPO, kgb

from kgb_core.calibration import COPY_METRIC
from kgb_core.reports.views import OperatorFacts, build_report, roofline

REFERENCE_OPS = ("aten.relu", "aten.add", "aten.sort", "vllm.silu_and_mul",
                 "cublas.cublasSaxpy_v2")
EMULATED_OPS = ("aten.relu", "aten.add", "aten.sort")


def _example_module():
    spec = importlib.util.spec_from_file_location(
        "write_example_report", REPO / "scripts" / "write_example_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    db = out / "results.db"
    _example_module().build_store(db, reference_ops=REFERENCE_OPS, emulated_ops=EMULATED_OPS,
                                  llm=True, calibrate=True, matmul_n=128)
    done = kgb("report", "--db", str(db), "--html", str(out / "report.html"),
               "--md", str(out / "report.md"), "--csv", str(out / "csv"))
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stderr and "correct%" in done.stdout  # the text table is kept
    as_json = kgb("report", "--db", str(db), "--json")
    assert as_json.returncode == 0, as_json.stderr
    return {"db": db, "out": out, "html": (out / "report.html").read_text(),
            "md": (out / "report.md").read_text(), "json": json.loads(as_json.stdout)}


# -- what the store says, independently of kgb's report code ---------------------------------
def _store_rows(db):
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute(
        "SELECT * FROM results WHERE id IN (SELECT MAX(id) FROM results "
        "GROUP BY op, backend, emulates, label, sample)")]
    conn.close()
    for row in rows:  # the report's "method" is the label (llm/scripted-model), not the plugin
        row["method"] = row["label"]
    return rows


def _label(row):
    return f"{row['backend']} (emulating {row['emulates']})" if row["emulates"] else row["backend"]


SKIPPED = {"skipped_denied", "skipped_unsupported"}
NOT_COMPILED = {"screen_rejected", "compile_error", "no_candidate"}


def _per_operator(db):
    ops = defaultdict(list)
    for row in _store_rows(db):
        ops[(row["source"], row["method"], _label(row), row["op"])].append(row)
    return ops


def _expected_groups(db):
    groups = defaultdict(lambda: {"tried": 0, "skipped": 0, "correct": 0, "compiled": 0,
                                  "speedups": []})
    for (source, method, label, _op), samples in _per_operator(db).items():
        group = groups[(source, method, label)]
        if all(r["verdict"] in SKIPPED for r in samples):
            group["skipped"] += 1
            continue
        group["tried"] += 1
        group["compiled"] += any(r["verdict"] not in NOT_COMPILED | SKIPPED for r in samples)
        passing = [r["speedup"] for r in samples if r["verdict"] == "pass" and r["speedup"]]
        if any(r["verdict"] == "pass" for r in samples):
            group["correct"] += 1
        if passing:
            group["speedups"].append(max(passing))
    return groups


def _geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


# -- reading the written formats -------------------------------------------------------------
class _Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self._table, self._row, self._cell = {}, None, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("id", f"t{len(self.tables)}"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _html_table(html, name):
    parser = _Tables()
    parser.feed(html)
    header, *rows = parser.tables[f"table-{name}"]
    return [dict(zip(header, row)) for row in rows]


def _md_table(md, title):
    lines = md.splitlines()
    start = lines.index(f"### {title}") + 2
    header = [c.strip() for c in lines[start].strip("|").split(" | ")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        rows.append(dict(zip(header, cells)))
    return rows


def _csv_table(out, name):
    with (out / "csv" / f"{name}.csv").open() as handle:
        return list(csv.DictReader(handle))


def _close(text, value, digits=3):
    """A shown number agrees with the store's to the digits it is shown with."""
    if value is None:
        return text in ("-", "n/a", "")
    shown = float(text)
    return math.isclose(shown, value, rel_tol=10 ** (1 - digits), abs_tol=0.051)


def _by_group(rows, keys=("source", "method", "backend")):
    return {tuple(r[k] for k in keys): r for r in rows}


# -- the views against the store ---------------------------------------------------------------
def test_ms_view_matches_the_store_in_every_format(made):
    expected = _expected_groups(made["db"])
    assert len(expected) >= 6  # 3 sources x reference, llm, emulated reference
    html_rows = _by_group(_html_table(made["html"], "ms"))
    md_rows = _by_group(_md_table(made["md"], "MS view: per source, method and backend"))
    csv_rows = _by_group(_csv_table(made["out"], "ms"))
    json_rows = _by_group(made["json"]["views"]["ms"])
    assert set(html_rows) == set(md_rows) == set(csv_rows) == set(json_rows) == set(expected)
    for key, group in expected.items():
        tried = group["tried"]
        correct_pct = 100.0 * group["correct"] / tried
        compile_pct = 100.0 * group["compiled"] / tried
        fast = {p: sum(s > p for s in group["speedups"]) / tried for p in (0, 0.5, 1, 1.5, 2)}
        for shown in (html_rows[key], md_rows[key]):
            assert int(shown["ops"]) == tried and int(shown["skipped"]) == group["skipped"]
            assert int(shown["correct"]) == group["correct"]
            assert _close(shown["correct %"], correct_pct)
            assert _close(shown["compile %"], compile_pct)
            assert _close(shown["speedup geomean"], _geomean(group["speedups"]))
            for p, share in fast.items():
                assert _close(shown[f"fast_{p:g} %"], 100.0 * share)
        raw = csv_rows[key]
        assert math.isclose(float(raw["correct %"]), correct_pct)
        assert math.isclose(float(raw["fast_0 %"]), fast[0])  # CSV keeps shares unscaled
        assert math.isclose(float(raw["speedup geomean"]), _geomean(group["speedups"]))
        data = json_rows[key]
        assert sorted(data["speedups"]) == pytest.approx(sorted(group["speedups"]))
    # the scripted LLM run: relu passed with its second sample, add never, neg never compiled
    llm = expected[("aten", "llm/scripted-model", "cpu")]
    assert (llm["tried"], llm["correct"], llm["compiled"]) == (3, 1, 2)


def test_fast_p_curve_is_the_step_function_of_the_correct_speedups(made):
    expected = _expected_groups(made["db"])
    curves = {c["group"]: c for c in made["json"]["views"]["fast_p_curves"]}
    for (source, method, label), group in expected.items():
        curve = curves[f"{source} / {method} / {label}"]
        for p, share in curve["points"]:
            assert share == pytest.approx(sum(s > p for s in group["speedups"]) / group["tried"])
    rows = _csv_table(made["out"], "fast_p_curve")
    assert len(rows) == sum(len(c["points"]) for c in curves.values())


def test_cost_view_matches_the_stored_tokens_and_dollars(made):
    sums = defaultdict(lambda: {"prompt": 0, "completion": 0, "cost": 0.0})
    for row in _store_rows(made["db"]):
        if row["verdict"] in SKIPPED:
            continue
        entry = sums[(row["method"], _label(row))]
        entry["prompt"] += row["prompt_tokens"] or 0
        entry["completion"] += row["completion_tokens"] or 0
        entry["cost"] += row["cost_usd"] or 0.0
    groups = _expected_groups(made["db"])
    html_rows = _by_group(_html_table(made["html"], "cost"), ("method", "backend"))
    md_rows = _by_group(_md_table(made["md"], "Cost per method"), ("method", "backend"))
    assert set(html_rows) == set(md_rows) == set(sums)
    llm = sums[("llm/scripted-model", "cpu")]
    # the script's usage, exactly: 10 answers with the prompt/completion counts it gave
    assert (llm["prompt"], llm["completion"]) == (2 * 900 + 2 * 1000 + 2 * 800 + 2 * 1200
                                                  + 2 * 1100, 400 + 350 + 500 + 480 + 20
                                                  + 300 + 600 + 610 + 450 + 460)
    assert llm["cost"] == pytest.approx((llm["prompt"] * 3.0 + llm["completion"] * 15.0) / 1e6)
    for key, entry in sums.items():
        solved = sum(g["correct"] for (s, m, b), g in groups.items() if (m, b) == key)
        tokens = entry["prompt"] + entry["completion"]
        for shown in (html_rows[key], md_rows[key]):
            assert int(shown["tokens"]) == tokens
            assert int(shown["prompt tokens"]) == entry["prompt"]
            assert _close(shown["cost $"], entry["cost"], digits=4)
            assert int(shown["solved"]) == solved
            assert _close(shown["tokens / solved"], tokens / solved if solved else None)
            if solved:
                assert _close(shown["$ / solved"], entry["cost"] / solved, digits=4)


def test_per_operator_rows_verdicts_and_interpreter_roofline_is_na(made):
    per_op = _per_operator(made["db"])
    html_rows = _by_group(_html_table(made["html"], "operators"), ("op", "method", "backend"))
    csv_rows = _by_group(_csv_table(made["out"], "operators"), ("op", "method", "backend"))
    assert set(html_rows) == {(op, m, b) for (_s, m, b, op) in per_op} == set(csv_rows)
    for (_source, method, label, op), samples in per_op.items():
        shown = html_rows[(op, method, label)]
        counts = Counter(r["verdict"] for r in samples)
        for verdict, n in counts.items():
            assert (f"{verdict} x{n}" if n > 1 else verdict) in shown["verdicts"]
        passed = any(r["verdict"] == "pass" for r in samples)
        skipped = all(r["verdict"] in SKIPPED for r in samples)
        assert shown["correct"] == ("skipped" if skipped else "yes" if passed else "no")
        # every row here was timed in the interpreter (or not at all): never a roofline number
        assert shown["roofline %"] == "n/a" and csv_rows[(op, method, label)]["roofline %"] == ""
        if passed:
            assert "interpreter" in shown["roofline note"]
            best = max(r["speedup"] for r in samples if r["verdict"] == "pass")
            assert _close(shown["speedup"], best)


def test_mc_view_and_transfer_matrix_from_the_store(made, registry):
    assert registry.source("aten").cross_chip_tag == "mc110"  # the set is the source's word
    mc110 = {spec.id for spec in registry.operators(tags=["mc110"])}
    per_op = _per_operator(made["db"])
    solved, tried = defaultdict(set), defaultdict(set)
    for (_source, method, label, op), samples in per_op.items():
        if method != "reference" or op not in mc110:
            continue
        if all(r["verdict"] in SKIPPED for r in samples):
            continue
        tried[label].add(op)
        if any(r["verdict"] == "pass" for r in samples):
            solved[label].add(op)
    emulated = "cpu (emulating ascend)"
    assert "aten.sort" not in tried[emulated]  # ascend's deny-list: skipped, not failed
    matrix = next(m for m in made["json"]["views"]["transfer"] if m["method"] == "reference")
    assert matrix["backends"] == sorted(tried) == ["cpu", emulated]
    for a in tried:
        for b in tried:
            base = solved[a] & tried[b]
            cell = matrix["cells"][a][b]
            assert cell["solved_on_row_and_tried"] == len(base)
            assert cell["share"] == pytest.approx(len(base & solved[b]) / len(base))
    table = _html_table(made["html"], "transfer_reference")
    assert [row["solved on \\ also solved on"] for row in table] == [
        "cpu [interpreter]", f"{emulated} [emulation]"]
    mc_rows = _by_group(_html_table(made["html"], "mc"), ("method", "backend"))
    emulated_row = mc_rows[("reference", emulated)]
    assert emulated_row["kind"] == "emulation" and int(emulated_row["skipped"]) == 1
    assert int(emulated_row["ops"]) == len(tried[emulated])


def test_emulated_results_are_never_labelled_hardware(made):
    for name in ("ms", "mc", "cost", "operators"):
        for row in _html_table(made["html"], name):
            if "ascend" in row["backend"]:
                assert row["backend"] == "cpu (emulating ascend)" and row["kind"] == "emulation"
            assert row["kind"] != "hardware"  # everything here ran in the interpreter
    assert "emulation, not results of that hardware" in made["html"]
    assert "emulation, not results of that hardware" in made["md"]


def test_html_is_self_contained_with_embedded_plots(made):
    html = made["html"]
    targets = re.findall(r"""\b(?:src|href)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)""", html)
    assert targets and all(t.strip("\"'").startswith(("data:", "#")) for t in targets)
    assert "<link" not in html and "url(" not in html
    # One inline script (sorting and filtering the tables), which asks the network for nothing.
    (script,) = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert script[0] == "" and not re.search(r"https?:|fetch\(|XMLHttpRequest|import\(|src\s*=",
                                               script[1])
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(images) >= 5  # correct bars, fast_p curve, speedups, transfer, cost
    for data in images:
        assert base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n")
    assert 'id="plot-fast_p_curve"' in html and 'id="plot-transfer_reference"' in html
    assert "plots-missing" not in html
    # the peaks kgb calibrate stored, labelled as torch's CPU rates
    peaks = _html_table(html, "peaks")
    assert {row["metric"] for row in peaks} == {COPY_METRIC, "matmul_bfloat16",
                                                "matmul_float16", "matmul_float32"}
    assert all(row["timer"] == "torch-cpu-wallclock" for row in peaks)


def test_without_matplotlib_the_html_has_tables_and_says_why_no_plots(made, monkeypatch,
                                                                      registry):
    from kgb_core.reports import load_report, render_plots
    from kgb_core.reports.render_html import render_html
    from kgb_core.store import ResultStore

    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    with ResultStore(made["db"]) as store:
        report = load_report(store, registry)
    assert render_plots(report) is None
    html = render_html(report, None)
    assert 'id="plots-missing"' in html and "kernelgenbench[report]" in html
    assert "<img" not in html
    assert _html_table(html, "ms") == _html_table(made["html"], "ms")


# -- the browser check ---------------------------------------------------------------------------
def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHECK_SCRIPT = """<script>
window.__errors = [];
window.addEventListener('error', function (e) {
  window.__errors.push(String(e.message || (e.target && e.target.tagName) || e)); }, true);
window.addEventListener('load', function () {
  var images = Array.prototype.slice.call(document.images);
  var broken = images.filter(function (i) { return !(i.complete && i.naturalWidth > 0); });
  document.documentElement.setAttribute('data-check', JSON.stringify({
    images: images.length, broken: broken.length,
    tables: document.querySelectorAll('table').length, errors: window.__errors,
    height: document.body.scrollHeight}));
});
</script>"""

BROWSER_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 "--no-first-run", "--host-resolver-rules=MAP * ~NOTFOUND")


@pytest.mark.skipif(_chromium() is None,
                    reason="no chromium binary on PATH (scripts/setup_test_tools.sh installs "
                           "it): the headless browser check of the HTML report cannot run here")
def test_the_html_renders_in_headless_chromium(made, tmp_path):
    # A copy with a check script before the report's own: the copy records, once the page has
    # loaded, every error event (a broken image, the report's script failing) and the layout.
    checked = tmp_path / "checked.html"
    checked.write_text(made["html"].replace("<head>", "<head>" + CHECK_SCRIPT, 1))
    profile = tmp_path / "profile"
    dom = subprocess.run([_chromium(), *BROWSER_FLAGS, f"--user-data-dir={profile}",
                          "--virtual-time-budget=5000", "--dump-dom", checked.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'data-check="([^"]*)"', dom.stdout)
    assert found, "the page never finished loading: " + dom.stdout[:500]
    check = json.loads(unescape(found.group(1)))
    assert check["errors"] == [] and check["broken"] == 0
    assert check["images"] >= 5 and check["tables"] >= 8 and check["height"] > 2000

    shot = tmp_path / "shot.png"
    done = subprocess.run([_chromium(), *BROWSER_FLAGS, f"--user-data-dir={profile}",
                           f"--screenshot={shot}", "--window-size=1280,2000",
                           (made["out"] / "report.html").as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    image_module = pytest.importorskip("PIL.Image")
    with image_module.open(shot) as image:
        rgb = image.convert("RGB")
        assert rgb.size == (1280, 2000)
        colours = rgb.getcolors(maxcolors=1 << 20)
        white = max(count for count, colour in colours if colour == (255, 255, 255))
    assert len(colours) > 50  # text, tables, plots: not a blank or one-colour page
    assert white < 0.97 * 1280 * 2000


# -- arithmetic on rows made for the purpose ------------------------------------------------------
def _timed_row(op="aten.x", candidate_ms=0.5, reference_ms=1.0, label="cuda-events+l2-flush",
               dtype="float16", verdict="pass", backend="gpu", sample=0, speedup=None):
    timings = [{"case": "big", "dtype": dtype, "candidate": {"median_ms": candidate_ms},
                "reference": {"median_ms": reference_ms}, "speedup": reference_ms / candidate_ms}]
    return {"op": op, "source": op.split(".")[0], "method": "m", "backend": backend,
            "emulates": "", "sample": sample, "verdict": verdict, "run_id": 1,
            "speedup": speedup if speedup is not None else reference_ms / candidate_ms,
            "candidate_ms": candidate_ms, "reference_ms": reference_ms, "timing_label": label,
            "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0,
            "detail": json.dumps({"timings": timings if verdict == "pass" else []}),
            "candidate_source": "def kernel(): ..."}


PEAKS = {"GPU 1": {COPY_METRIC: {"value": 4e12}, "matmul_float16": {"value": 500e12}}}


def test_roofline_percent_is_the_peak_bound_over_the_measured_time():
    # 2 GB moved at 4 TB/s is 0.5 ms; 1e11 FLOPs at 500 TFLOP/s is 0.2 ms: memory-bound,
    # 0.5 ms bound over 0.625 ms measured is 80 %, over the 1.0 ms baseline 50 %.
    facts = OperatorFacts(frozenset(), {("big", "float16"): (1e11, 2e9)})
    pct, ref, bound, note = roofline(_timed_row(candidate_ms=0.625), facts, PEAKS["GPU 1"], "")
    assert pct == pytest.approx(80.0) and ref == pytest.approx(50.0) and bound == "memory"
    # compute-bound: 1e12 FLOPs take 2 ms at the peak
    facts = OperatorFacts(frozenset(), {("big", "float16"): (1e12, 2e9)})
    pct, _, bound, _ = roofline(_timed_row(candidate_ms=4.0), facts, PEAKS["GPU 1"], "")
    assert pct == pytest.approx(50.0) and bound == "compute"
    # no matmul peak for the dtype: the memory term alone, and the note says so
    facts = OperatorFacts(frozenset(), {("big", "int32"): (1e12, 2e9)})
    pct, _, _, note = roofline(_timed_row(dtype="int32"), facts, PEAKS["GPU 1"], "")
    assert pct == pytest.approx(100.0) and "memory term only" in note


def test_roofline_is_na_with_the_reason_where_no_honest_number_exists():
    facts = OperatorFacts(frozenset(), {("big", "float16"): (1e11, 2e9)})
    cases = [
        (_timed_row(label="interpreter-wallclock"), facts, PEAKS["GPU 1"], "interpreter"),
        (_timed_row(), facts, None, "kgb calibrate"),
        (_timed_row(), None, PEAKS["GPU 1"], "not installed"),
    ]
    for row, op_facts, peaks, reason in cases:
        pct, ref, _, note = roofline(row, op_facts, peaks, "GPU 1")
        assert pct is None and ref is None and reason in note


def test_build_report_uses_the_peaks_of_the_device_each_run_recorded():
    rows = [_timed_row("aten.a", candidate_ms=0.625), _timed_row("aten.b", candidate_ms=1.0)]
    rows[1]["run_id"] = 2
    runs = [{"id": 1, "created_at": "", "finished_at": "", "plan": {},
             "environment": {"worker": {"device_name": "GPU 1"}}},
            {"id": 2, "created_at": "", "finished_at": "", "plan": {},
             "environment": {"worker": {"device_name": "GPU 2"}}}]
    facts = {op: OperatorFacts(frozenset({"mc110"}), {("big", "float16"): (1e11, 2e9)},
                               cross_chip=True)
             for op in ("aten.a", "aten.b")}
    report = build_report(rows, runs, PEAKS, facts)
    by_op = {r.op: r for r in report.operators}
    assert by_op["aten.a"].roofline_pct == pytest.approx(80.0)
    assert by_op["aten.a"].kind == "hardware"
    assert by_op["aten.b"].roofline_pct is None and "GPU 2" in by_op["aten.b"].roofline_note


def test_fast_p_and_transfer_on_known_outcomes():
    # backend A solves a (3x), b (0.8x), c (1.6x); backend B solves a and c, fails b, skips d
    rows = [_timed_row("aten.a", 1.0, 3.0, backend="A"), _timed_row("aten.b", 1.0, 0.8,
                                                                     backend="A"),
            _timed_row("aten.c", 1.0, 1.6, backend="A"), _timed_row("aten.d", 1.0, 1.0,
                                                                     backend="A"),
            _timed_row("aten.a", 1.0, 1.2, backend="B"),
            _timed_row("aten.b", verdict="wrong_output", backend="B"),
            _timed_row("aten.c", 1.0, 0.4, backend="B"),
            _timed_row("aten.d", verdict="skipped_denied", backend="B")]
    for row in rows:
        if row["verdict"] != "pass":
            row["speedup"] = None
    facts = {op: OperatorFacts(frozenset({"mc110"}), {}, cross_chip=True) for op in
             ("aten.a", "aten.b", "aten.c", "aten.d")}
    report = build_report(rows, [], {}, facts)
    ms = {r.backend: r for r in report.ms}
    assert ms["A"].fast_p == {"0": 1.0, "0.5": 1.0, "1": 0.5, "1.5": 0.5, "2": 0.25}
    assert ms["B"].operators == 3 and ms["B"].skipped == 1
    assert ms["B"].fast_p == pytest.approx({"0": 2 / 3, "0.5": 1 / 3, "1": 1 / 3, "1.5": 0.0,
                                            "2": 0.0})
    assert ms["A"].speedup_median == pytest.approx(1.3)  # of 0.8, 1.0, 1.6, 3.0
    (matrix,) = report.transfer
    assert matrix.cells["A"]["B"]["share"] == pytest.approx(2 / 3)  # d is not tried on B
    assert matrix.cells["A"]["B"]["solved_on_row_and_tried"] == 3
    assert matrix.cells["B"]["A"]["share"] == 1.0
    untimed = build_report([dict(r, speedup=None, detail="{}") for r in rows[:2]], [], {}, facts)
    assert untimed.ms[0].fast_p is None  # nothing timed: no fast_p rather than a false 0


# -- kgb calibrate ------------------------------------------------------------------------------
def test_calibrate_adds_its_table_to_an_existing_store_and_labels_cpu_rates(tmp_path):
    from kgb_core.evaluation.results import EvalResult
    from kgb_core.store import ResultStore

    db = tmp_path / "old.db"
    with ResultStore(db) as store:  # a store with a result in it...
        run = store.start_run({"operators": ["aten.neg"]}, {"worker": {}})
        store.record(run, "aten", EvalResult(op="aten.neg", backend="cpu", verdict="pass"), None)
    conn = sqlite3.connect(db)  # ...as kgb made it before device_peaks existed
    conn.execute("DROP TABLE device_peaks")
    conn.commit()
    conn.close()
    done = kgb("calibrate", "--backend", "cpu", "--db", str(db), "--matmul-n", "64",
               "--copy-mib", "4", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    peaks = {p["metric"]: p for p in data["peaks"]}
    assert set(peaks) == {COPY_METRIC, "matmul_bfloat16", "matmul_float16", "matmul_float32"}
    assert all(p["timer_label"] == "torch-cpu-wallclock" for p in peaks.values())
    assert "not the Triton interpreter" in peaks[COPY_METRIC]["measured_with"]
    assert peaks[COPY_METRIC]["value"] == pytest.approx(
        2 * (4 << 20) / (peaks[COPY_METRIC]["median_ms"] * 1e-3))
    assert peaks["matmul_float32"]["value"] == pytest.approx(
        2 * 64 ** 3 / (peaks["matmul_float32"]["median_ms"] * 1e-3))
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1  # kept as it was
    stored = conn.execute("SELECT device_name, metric FROM device_peaks").fetchall()
    conn.close()
    assert {metric for _, metric in stored} == set(peaks)
    assert {device for device, _ in stored} == {data["device_name"]}
    text = kgb("calibrate", "--backend", "cpu", "--db", str(db), "--matmul-n", "64",
               "--copy-mib", "4")
    assert text.returncode == 0 and "torch's CPU rates" in text.stdout


def test_the_html_shows_generated_candidates_sources_and_not_the_shipped_kernels(made):
    """Which run's candidates are known-good is the run's record of Method.trusted, not the
    method's name: the scripted LLM's passing relu is shown, no reference kernel is."""
    section = made["html"].split("<h3>Best candidates (generated, not the shipped kernels)</h3>")
    assert len(section) == 2
    shown = re.findall(r"<summary>(\S+) \(([^,]+),", section[1])
    assert shown and all(method == "llm/scripted-model" for _, method in shown), shown
    with sqlite3.connect(made["db"]) as conn:
        trusted = {json.loads(env).get("method_trusted")
                   for (env,) in conn.execute("SELECT environment FROM runs")}
    assert trusted == {True, False}
