"""The ``kgb`` command line (Typer).

Errors a user can cause print one line and exit with code 2; ``kgb eval`` exits 0 when the
candidate passes and 1 when it does not, so scripts and agents can branch on it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, List, Optional, Tuple

import typer

from kgb_core import emulation
from kgb_core.backends import backend_label
from kgb_core.config import DEFAULT_DB, RunConfig, apply_overrides, load_config
from kgb_core.errors import UserError
from kgb_core.evaluation.results import EvalResult
from kgb_core.plugins import Registry, load_registry
from kgb_core.source_options import configure as configure_sources
from kgb_core.source_options import merged, parse_assignments
from kgb_core.report import (baseline_note, render_results, render_summary, render_table,
                             sandbox_counts, sandbox_note, summarize)

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="KernelGenBench: evaluate LLM-written Triton kernels per operator and chip.")
ops_app = typer.Typer(invoke_without_command=True, help="List operators, or show one.")
app.add_typer(ops_app, name="ops")

_registry: Registry | None = None


def registry() -> Registry:
    global _registry
    if _registry is None:
        _registry = load_registry()
    return _registry


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


@app.command("plugins")
def plugins_command(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Every discovered plugin, what it provides, and any that failed to load."""
    infos = registry().plugins
    if as_json:
        _print_json([info.to_dict() for info in infos])
        return
    rows = []
    for info in infos:
        provides = ", ".join(f"{kind}:{name}" for kind, name in info.provides) or "-"
        dist = f"{info.distribution} {info.version}".strip() or "-"
        rows.append([info.name, provides, dist,
                     "FAILED: " + info.error.splitlines()[0] if info.error else "ok"])
    typer.echo(render_table(["plugin", "provides", "distribution", "status"], rows))


@ops_app.callback()
def ops_command(ctx: typer.Context,
                source: Optional[List[str]] = typer.Option(None, "--source", help="Only this source (repeatable)."),
                tag: Optional[List[str]] = typer.Option(None, "--tag", help="Only operators with this tag (repeatable)."),
                source_opt: Optional[List[str]] = typer.Option(None, "--source-opt", help="A source's option, NAME.KEY=VALUE (repeatable), e.g. kernelbench.path=DIR."),
                as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Operators as <source>.<name>, with signature, dtypes and tags."""
    configure_sources(registry(), parse_assignments(source_opt or []))
    if ctx.invoked_subcommand is not None:
        return
    specs = registry().operators(source or [], tag or [])
    if as_json:
        _print_json([spec.describe() for spec in specs])
        return
    rows = [[spec.id, spec.signature, ",".join(spec.written_args()) or "-",
             ",".join(spec.dtypes), len(spec.shown_cases()), ",".join(sorted(spec.tags))]
            for spec in specs]
    typer.echo(render_table(["op", "signature", "writes", "dtypes", "cases", "tags"], rows))
    typer.echo(f"\n{len(specs)} operators")


@ops_app.command("show")
def ops_show_command(op_id: str = typer.Argument(..., help="An operator id such as aten.softmax."),
                     as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """One operator: description, signature, tolerances, shape cases with FLOP and byte counts."""
    info = registry().operator(op_id).describe()
    if as_json:
        _print_json(info)
        return
    typer.echo(f"{info['id']}: {info['signature']}\n  {info['description']}")
    typer.echo(f"  dtypes: {', '.join(info['dtypes'])}   tags: {', '.join(info['tags']) or '-'}")
    typer.echo(f"  writes: {', '.join(info['writes']) or '- (returns its result)'}; every "
               f"other argument must come back unchanged")
    for dtype, tol in info["tolerances"].items():
        rule = tol["bound"] if "bound" in tol else f"rtol={tol['rtol']:g} atol={tol['atol']}"
        typer.echo(f"  tolerance {dtype}: {rule}")
    rows = []
    first_dtype = info["dtypes"][0]
    for case in info["cases"]:
        counts = case["counts"][first_dtype]
        rows.append([case["name"], case["tier"], json.dumps(case["params"]), case["reduce_dim"],
                     f"{counts['flops']:.3g}", f"{counts['bytes']:.3g}"])
    typer.echo("")
    typer.echo(render_table(["case", "tier", "params", "reduce_dim", "flops",
                             f"bytes ({first_dtype})"], rows))
    if info["heldout_cases"]:
        typer.echo(f"\n+ {info['heldout_cases']} held-out case(s), checked but never shown")


def _distribution(reg: Registry, kind: str, name: str) -> str:
    info = reg.provider(kind, name)
    return f"{info.distribution} {info.version}".strip() if info else ""


@app.command("methods")
def methods_command(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Each generation method, its distribution, and the options it takes under [method]."""
    reg = registry()
    entries = [{"name": method.name, "description": method.description,
                "default": method.default, "trusted": method.trusted,
                "distribution": _distribution(reg, "method", method.name),
                "options": [{"name": option.name, "type": option.type_name(),
                             "default": option.default, "description": option.description}
                            for option in method.options]}
               for method in reg.methods()]
    if as_json:
        _print_json(entries)
        return
    typer.echo(render_table(["method", "distribution", "description"],
                            [[e["name"] + (" (default)" if e["default"] else ""),
                              e["distribution"] or "-", e["description"]] for e in entries]))
    for entry in entries:
        if entry["options"]:
            typer.echo(f"\n[method] name = \"{entry['name']}\" takes:")
            typer.echo(render_table(["option", "type", "default", "what it does"],
                                    [[o["name"], o["type"], json.dumps(o["default"]),
                                      o["description"]] for o in entry["options"]]))


@app.command("backends")
def backends_command(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Each backend, its distribution, whether it is available here, and if not, why; with
    ``--json``, its whole profile too (what kgb takes the chip to be)."""
    reg = registry()
    entries = []
    for backend in reg.backends():
        availability = backend.safe_probe()
        profile = backend.profile.to_dict()
        entries.append({"name": backend.name, "available": availability.available,
                        "reason": availability.reason, "description": backend.description,
                        "distribution": _distribution(reg, "backend", backend.name),
                        "quirks": profile.pop("quirks"), "profile": profile})
    if as_json:
        _print_json(entries)
        return
    typer.echo(render_table(["backend", "distribution", "available", "why", "description"],
                            [[e["name"], e["distribution"] or "-",
                              "yes" if e["available"] else "no", e["reason"],
                              e["description"]] for e in entries]))


@app.command("doctor")
def doctor_command(backend: Optional[str] = typer.Option(None, "--backend", help="The backend that must be able to run (default: the auto-detected one)."),
                   as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """What every installed backend probed, found and misses; exit 1 when the selected
    backend (or the auto-detected one) cannot run here."""
    from kgb_core.sweep import resolve_backend

    reg = registry()
    if backend is not None:
        reg.backend(backend)  # an unknown name is a user error (exit 2), before any probe
    report = []
    for item in reg.backends():
        availability = item.safe_probe()
        report.append({"backend": item.name,
                       "distribution": _distribution(reg, "backend", item.name),
                       "module": getattr(reg.provider("backend", item.name), "module", ""),
                       "description": item.description, **availability.to_dict()})
    broken = [{"plugin": p.name, "distribution": f"{p.distribution} {p.version}".strip(),
               "error": p.error.splitlines()[0]} for p in reg.plugins if p.error]
    try:
        chosen, note = resolve_backend(reg, backend)
        selected = {"backend": chosen.name, "can_run": True, "why": note or "selected"}
    except UserError as error:
        selected = {"backend": backend, "can_run": False, "why": str(error)}
    from kgb_core.evaluation.sandbox import find_sandbox

    tool = find_sandbox()
    runner_sandbox = {"sandbox": tool.name, "detail": tool.detail}
    if as_json:
        _print_json({"backends": report, "broken_plugins": broken, "selected": selected,
                     "runner_sandbox": runner_sandbox})
    else:
        for entry in report:
            state = "available" if entry["available"] else "NOT AVAILABLE"
            where = entry["distribution"] or "-"
            typer.echo(f"{entry['backend']} [{where}; {entry['module'] or '-'}]: {state}")
            typer.echo(f"  {entry['reason'] or '(the probe gave no reason)'}")
            if not entry["checks"]:
                typer.echo("  (this backend's probe lists no individual checks)")
            for check in entry["checks"]:
                mark = "ok     " if check["ok"] else "MISSING"
                detail = f": {check['detail']}" if check["detail"] else ""
                typer.echo(f"  {mark} {check['what']}{detail}")
        for plugin in broken:
            typer.echo(f"plugin {plugin['plugin']} [{plugin['distribution'] or '-'}] failed to "
                       f"load: {plugin['error']}")
        label = selected["backend"] or "auto-detected backend"
        verdict = "can run" if selected["can_run"] else "CANNOT run"
        typer.echo(f"\nselected: {label} {verdict}: {selected['why']}")
        if tool.sandboxed:
            typer.echo(f"runner sandbox: {tool.name}: {tool.detail}")
        else:
            typer.echo(f"runner sandbox: NONE: {tool.detail}; candidates would run "
                       f"unsandboxed (results recorded with sandbox = none)")
    raise typer.Exit(0 if selected["can_run"] else 1)


def _read_candidate(path: Path) -> str:
    if not path.exists():
        raise UserError(f"candidate file {path} does not exist")
    if not path.is_file():
        raise UserError(f"candidate {path} is not a file")
    if path.suffix != ".py":
        raise UserError(f"candidate {path} is not a Python file (a candidate is one .py file "
                        f"defining kernel(...))")
    from kgb_core.evaluation.screen import MAX_SOURCE_BYTES

    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise UserError(f"candidate {path} is {path.stat().st_size} bytes; a kernel file is at "
                        f"most {MAX_SOURCE_BYTES}")
    data = path.read_bytes()
    if b"\x00" in data:
        raise UserError(f"candidate {path} is a binary file, not Python source")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"candidate {path} is not UTF-8 text") from None


def _print_eval(result: EvalResult) -> None:
    where = f" (sandbox: {result.sandbox})" if result.sandbox else ""
    typer.echo(f"{result.op} on {result.backend_label}{where}: {result.verdict}")
    if result.message:
        typer.echo(f"  {result.message}")
    rows = [[c["case"], c["dtype"], c.get("seed", "-"), c["status"], c.get("max_abs_error"),
             c.get("max_rel_error")] for c in result.cases]
    if rows:
        typer.echo(render_table(["case", "dtype", "seed", "status", "max abs err",
                                 "max rel err"], rows))
    if result.timings:
        typer.echo("")
        typer.echo(render_table(
            ["case", "dtype", "candidate ms", "reference ms", "speedup"],
            [[t["case"], t["dtype"], t["candidate"]["median_ms"], t["reference"]["median_ms"],
              t["speedup"]] for t in result.timings]))
        typer.echo(f"timer: {result.timing_label}; geomean speedup {result.speedup:.3g}"
                   if result.speedup else f"timer: {result.timing_label}")
    if result.log_tail and not result.passed:
        typer.echo("  worker log (tail):\n" + result.log_tail[-1500:])


@app.command("eval")
def eval_command(kernel_file: Path = typer.Argument(..., help="Candidate Python file defining kernel(...)."),
                 op: str = typer.Option(..., "--op", help="Operator id, e.g. aten.softmax."),
                 backend: Optional[str] = typer.Option(None, "--backend", help="Backend name (default: auto-detect)."),
                 emulate: Optional[str] = typer.Option(None, "--emulate", help="Apply this installed backend's quirks to --backend (default cpu); labelled as emulation."),
                 seeds: Optional[List[int]] = typer.Option(None, "--seed", help="Input seed (repeatable); default 0 and 1."),
                 timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds before the worker is killed."),
                 no_timing: bool = typer.Option(False, "--no-timing", help="Check correctness only."),
                 source_opt: Optional[List[str]] = typer.Option(None, "--source-opt", help="A source's option, NAME.KEY=VALUE (repeatable), e.g. kernelbench.path=DIR."),
                 as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Evaluate one candidate file against one operator."""
    from kgb_core.sweep import evaluate_file, evaluation_settings, resolve_backend

    source = _read_candidate(kernel_file)
    reg = registry()
    chosen, note = resolve_backend(reg, backend, emulate)
    if note:
        typer.echo(note, err=True)
    denied = chosen.quirks.denied_operators.get(op)
    if denied is not None:  # a sweep skips it; one file asked for by name is still checked
        typer.echo(f"note: {op} is on the deny-list of {chosen.label} ({denied}); a sweep "
                   f"skips it, evaluating this file anyway", err=True)
    config = apply_overrides(RunConfig(), seeds=seeds, timeout_s=timeout)
    config.timing = not no_timing
    config.source_options = parse_assignments(source_opt or [])
    configure_sources(reg, config.source_options)
    result = evaluate_file(reg, op, source, chosen, evaluation_settings(config))
    if result.sandbox == "none":
        from kgb_core.evaluation import sandbox

        typer.echo(sandbox.warning(sandbox.find_sandbox()), err=True)
    if as_json:
        _print_json(result.to_dict())
    else:
        _print_eval(result)
    raise typer.Exit(0 if result.passed else 1)


@app.command("run")
def run_command(source: Optional[List[str]] = typer.Option(None, "--source", help="Operator source (repeatable)."),
                op: Optional[List[str]] = typer.Option(None, "--op", help="Operator id (repeatable)."),
                tag: Optional[List[str]] = typer.Option(None, "--tag", help="Only operators with this tag."),
                method: Optional[str] = typer.Option(None, "--method", help="Generation method (default: the one the plugins declare, the reference kernels)."),
                backend: Optional[str] = typer.Option(None, "--backend", help="Backend (default: auto-detect)."),
                emulate: Optional[str] = typer.Option(None, "--emulate", help="Apply this installed backend's quirks to --backend (default cpu); every result is labelled as emulation."),
                config_file: Optional[Path] = typer.Option(None, "--config", help="Run config TOML."),
                db: Optional[str] = typer.Option(None, "--db", help=f"Result store (default {DEFAULT_DB})."),
                resume: bool = typer.Option(False, "--resume", help="Continue the latest run with the same plan."),
                seeds: Optional[List[int]] = typer.Option(None, "--seed", help="Input seed (repeatable)."),
                timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per candidate."),
                samples: Optional[int] = typer.Option(None, "--samples", help="Candidates per operator (pass@k), for methods that take it."),
                no_timing: bool = typer.Option(False, "--no-timing", help="Check correctness only."),
                concurrency: Optional[int] = typer.Option(None, "--concurrency", help="Operators generated at once (threads calling the method's endpoint; default 1)."),
                devices: Optional[str] = typer.Option(None, "--devices", help="One evaluation worker per device, pinned to it: 0,1,2,3 or all (default: one worker)."),
                workers_per_device: Optional[int] = typer.Option(None, "--workers-per-device", help="Worker processes per device (default 1): their checks overlap, and in a timed run each times with the device to itself (the device's lock)."),
                timing_gather_s: Optional[float] = typer.Option(None, "--timing-gather-s", help="With --workers-per-device above 1 in a timed run: seconds a judge ready to time may wait for another, so that both wait once for the checks under way to end (default 0)."),
                executor: Optional[str] = typer.Option(None, "--executor", help="local (default) or ray (pip install \"kernelgenbench[ray]\")."),
                address: Optional[str] = typer.Option(None, "--address", help="With --executor ray: the cluster to join (default: a local Ray instance)."),
                source_opt: Optional[List[str]] = typer.Option(None, "--source-opt", help="A source's option, NAME.KEY=VALUE (repeatable), e.g. kernelbench.path=DIR."),
                baselines: Optional[str] = typer.Option(None, "--baselines", help="Stored baseline timings, reused by later runs on this machine: a file, or none (default on a GPU: ~/.cache/kgb/baselines.sqlite)."),
                retime_baselines: bool = typer.Option(False, "--retime-baselines", help="Measure every stored baseline again, once, in this run."),
                stop_after: Optional[float] = typer.Option(None, "--stop-after", help="Start no operator after this many seconds; those running finish and are stored, and --resume does the rest."),
) -> None:
    """Run a sweep: generate with a method, evaluate on a backend, store every result.

    Generation and evaluation overlap: --concurrency operators are generated at once while
    one worker per device (--devices) evaluates, each device timing one candidate at a time;
    with --no-timing, --workers-per-device N runs N workers on each device (a correctness
    pass that also warms Triton's cache); --executor ray spreads the workers over a Ray
    cluster. docs/scale-out.md has the details.
    """
    from kgb_core.store import ResultStore
    from kgb_core.sweep import plan_sweep, run_sweep

    config = load_config(config_file) if config_file else RunConfig()
    config = apply_overrides(config, sources=source, ops=op, tags=tag, method=method,
                             backend=backend, emulate=emulate, db=db, seeds=seeds,
                             timeout_s=timeout, concurrency=concurrency, devices=devices,
                             workers_per_device=workers_per_device, executor=executor,
                             ray_address=address, baselines=baselines,
                             timing_gather_s=timing_gather_s)
    if retime_baselines:
        config.retime_baselines = True
    if address and config.executor != "ray":
        raise UserError("--address names a Ray cluster; use it with --executor ray")
    config.source_options = merged(config.source_options,
                                   parse_assignments(source_opt or []))
    if samples is not None:
        config.method_options = {**config.method_options, "samples": samples}
    if no_timing:
        config.timing = False
    reg = registry()
    plan = plan_sweep(config, reg)
    if plan.backend_note:
        typer.echo(plan.backend_note, err=True)
    typer.echo(f"kgb run: {len(plan.operators)} operators, method {plan.method.name}, backend "
               f"{plan.backend.label}, store {config.db}", err=True)
    with ResultStore(config.db) as store:
        outcome = run_sweep(plan, reg, store, resume=resume,
                            notes=lambda message: typer.echo(message, err=True),
                            stop_at=None if stop_after is None
                            else time.monotonic() + stop_after)
        rows = store.results(outcome.run_id)
    typer.echo(render_results(rows))
    typer.echo("")
    typer.echo(render_summary(summarize(rows)) + sandbox_note(rows) + baseline_note(rows))
    typer.echo(f"\nrun {outcome.run_id}: {outcome.evaluated} evaluated now, "
               f"{outcome.skipped_done} already done; results in {config.db}")
    if outcome.wall_s and (len(outcome.usage) > 1 or config.concurrency > 1):
        typer.echo("evaluation workers: " + "; ".join(
            f"{u.slot}: {u.jobs} jobs, busy {100 * u.busy_s / outcome.wall_s:.0f}%"
            for u in outcome.usage) + f" of {outcome.wall_s:.1f} s")
        retried = sum(u.retried_alone for u in outcome.usage)
        if retried:
            typer.echo(f"{retried} job(s) ran out of device memory beside other workers and "
                       f"were run again with the device to themselves; their verdicts are "
                       f"from that run")
        capped = sorted({u.sharing_cap for u in outcome.usage if u.sharing_cap is not None})
        if capped:
            typer.echo(f"at the end, at most {', '.join(map(str, capped))} job(s) shared a "
                       f"device, so that they fit in its memory")
    if outcome.stopped_by_budget:
        typer.echo(f"stopped: {outcome.stopped_by_budget}")


@app.command("merge")
def merge_command(stores: List[Path] = typer.Argument(..., help="Result stores to merge (one per machine or chip)."),
                  output: Path = typer.Option(..., "-o", "--output", help="The merged store (created, or merged into when it exists)."),
                  prefer: str = typer.Option("error", "--prefer", help="When one run's result for a key differs between stores: error (default: stop, write nothing), newer or older (the row recorded later, or first, wins)."),
                  as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Merge result stores from several machines into one; idempotent.

    Runs are matched by their uid (kept in every copy of a store), results by (run, op,
    backend, method, sample): a row already merged, identical, is skipped, so merging twice
    or merging overlapping stores adds nothing twice. Different runs (other uids) are all
    kept, with their environments. The same run and key with different content is a
    conflict: by default nothing is written; --prefer newer|older settles it. Inputs are only
    read. `kgb report --db OUTPUT` then shows every chip. Full rules: docs/scale-out.md.
    """
    from kgb_core.merge import merge_stores

    report = merge_stores(stores, output, prefer=prefer)
    if as_json:
        _print_json(report.to_dict())
        return
    typer.echo(f"merged {len(stores)} store(s) into {output}: {report.runs_added} run(s) and "
               f"{report.results_added} result(s) added, {report.runs_known} run(s) and "
               f"{report.results_known} result(s) already there"
               + (f", {report.results_replaced} replaced" if report.results_replaced else "")
               + (f", {report.responses_added} cached answer(s) added"
                  if report.responses_added else "")
               + (f", {report.peaks_added} calibration measurement(s) added"
                  if report.peaks_added else ""))
    for conflict in report.conflicts:
        typer.echo(f"  conflict (kept the {prefer} row): {conflict}")


@app.command("runs")
def runs_command(db: str = typer.Option(DEFAULT_DB, "--db", help="Result store."),
                 as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """The store's runs: each one's method label, plugin, backend, plan size, results so far
    (and how many passed), and when it started and finished."""
    from kgb_core.store import ResultStore

    if not Path(db).is_file():
        raise UserError(f"no result store at {db} (run `kgb run` first, or pass --db)")
    with ResultStore(db) as store:
        listed = store.run_listing()
    if as_json:
        _print_json(listed)
        return
    if not listed:
        typer.echo(f"{db} holds no runs yet")
        return
    typer.echo(render_table(
        ["run", "label", "plugin", "backend", "planned ops", "results", "passed", "started",
         "finished"],
        [[r["id"], r["label"], r["method"], backend_label(r["backend"], r["emulates"]),
          r["planned_operators"], r["results"],
          r["passed"], r["created_at"], r["finished_at"] or "(unfinished)"] for r in listed]))


@app.command("report")
def report_command(db: str = typer.Option(DEFAULT_DB, "--db", help="Result store."),
                   run: Optional[int] = typer.Option(None, "--run", help="Only this run id (default: latest result of every op)."),
                   per_op: bool = typer.Option(False, "--per-op", help="Also list every result."),
                   html: Optional[Path] = typer.Option(None, "--html", help="Write the full report (MS, MC, cost, per-operator views, plots) as one self-contained HTML file."),
                   md: Optional[Path] = typer.Option(None, "--md", help="Write the report's tables as Markdown."),
                   csv_dir: Optional[Path] = typer.Option(None, "--csv", help="Write one CSV per table into this directory."),
                   compare: Optional[Tuple[str, str]] = typer.Option(None, "--compare", help="Two method labels of this store (or two store files, one label each) side by side per operator: solved by both, by one only, speedup ratio; differences first."),
                   as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Summary per source, method and backend: correct %, geomean speedup, fast_1, fast_2;
    with --html/--md/--csv/--json also the MS, MC, cost and per-operator views."""
    from kgb_core.store import ResultStore

    if not Path(db).is_file():
        raise UserError(f"no result store at {db} (run `kgb run` first, or pass --db)")
    views = None
    with ResultStore(db) as store:
        rows = store.results(run)
        runs = store.runs()
        if not compare and (as_json or html or md or csv_dir):
            from kgb_core.reports import load_report

            views = load_report(store, registry(), run, title=f"kgb report: {Path(db).name}")
    if compare:
        from kgb_core.reports.compare import compare as compare_methods, render_comparison

        comparison = compare_methods(compare[0], compare[1], rows)
        if as_json:
            _print_json(comparison.to_dict())
        else:
            typer.echo(render_comparison(comparison))
        return
    summaries = summarize(rows)
    if views is not None:
        from kgb_core.reports import write_csv, write_html, write_md

        if html:
            typer.echo(f"wrote {write_html(views, html)}", err=True)
        if md:
            typer.echo(f"wrote {write_md(views, md, html.name if html else None)}", err=True)
        if csv_dir:
            typer.echo(f"wrote {len(write_csv(views, csv_dir))} CSV files to {csv_dir}", err=True)
    if as_json:
        _print_json({"summary": [s.to_dict() for s in summaries],
                     "runs": [{"id": r["id"], "created_at": r["created_at"],
                               "finished_at": r["finished_at"], "label": r["label"],
                               "environment": r["environment"]}
                              for r in runs],
                     "sandbox": sandbox_counts(rows),
                     "views": views.to_dict()})
        return
    if not rows:
        typer.echo(f"{db} holds no results yet")
        return
    if per_op:
        typer.echo(render_results(rows))
        typer.echo("")
    from kgb_core.reports.leaderboard import leaderboard
    from kgb_core.reports.tables import leaderboard_text

    typer.echo("leaderboard (all sources):\n" + leaderboard_text(leaderboard(rows)) + "\n")
    typer.echo(render_summary(summaries) + sandbox_note(rows) + baseline_note(rows))


@app.command("calibrate")
def calibrate_command(backend: Optional[str] = typer.Option(None, "--backend", help="Backend whose device is measured (default: auto-detect)."),
                      db: str = typer.Option(DEFAULT_DB, "--db", help="Result store the peaks are kept in."),
                      matmul_n: Optional[int] = typer.Option(None, "--matmul-n", help="Square matmul size (default 8192 on a GPU, 512 on the CPU)."),
                      copy_mib: Optional[int] = typer.Option(None, "--copy-mib", help="Copy buffer in MiB (default 1024 on a GPU, 64 on the CPU)."),
                      as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Measure the device's copy bandwidth and matmul rates (the roofline's peaks) with the
    backend's timer and store them per device name; `kgb report` reads them."""
    from kgb_core.calibration import CalibrationSizes, format_peak, measure_peaks
    from kgb_core.store import ResultStore
    from kgb_core.sweep import resolve_backend

    chosen, note = resolve_backend(registry(), backend)
    if note:
        typer.echo(note, err=True)
    sizes = None
    if matmul_n is not None or copy_mib is not None:
        default = CalibrationSizes.for_device_type(chosen.quirks.device_type)
        sizes = CalibrationSizes(copy_bytes=(copy_mib << 20) if copy_mib else default.copy_bytes,
                                 matmul_n=matmul_n or default.matmul_n)
    rows = measure_peaks(chosen, sizes, progress=lambda m: typer.echo(f"calibrate: {m}", err=True))
    device_name = emulation.device_name(chosen)
    with ResultStore(db) as store:
        store.record_peaks(device_name, chosen.name, rows)
    if as_json:
        _print_json({"device_name": device_name, "backend": chosen.name, "peaks": rows})
        return
    typer.echo(f"{device_name} (backend {chosen.name}), stored in {db}")
    typer.echo(render_table(["metric", "peak", "median ms", "cv", "reps", "timer"],
                            [[r["metric"], format_peak(r["metric"], r["value"]), r["median_ms"],
                              r["cv"], r["repetitions"], r["timer_label"]] for r in rows]))
    if not chosen.timings_measure_hardware:
        typer.echo("note: these are torch's CPU rates; kernels run in Triton's interpreter get "
                   "no roofline % from them (interpreter timings are no performance numbers).")


@app.command("serve")
def serve_command(host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (default loopback only)."),
                  port: int = typer.Option(8000, "--port", help="Port to bind."),
                  backend: Optional[str] = typer.Option(None, "--backend", help="Backend (default: auto-detect)."),
                  emulate: Optional[str] = typer.Option(None, "--emulate", help="Apply this installed backend's quirks to --backend (default cpu); labelled as emulation."),
                  db: Optional[str] = typer.Option(None, "--db", help="Record every evaluation in this store, with its request id (default: none)."),
                  token_env: Optional[str] = typer.Option(None, "--token-env", help="Require Authorization: Bearer <the value of this environment variable>."),
                  timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per candidate (default 300)."),
                  max_queue: int = typer.Option(64, "--max-queue", help="Evaluations waiting or running before requests get 429."),
                  max_batch: int = typer.Option(64, "--max-batch", help="Requests one batch may hold."),
                  max_request_bytes: int = typer.Option(4 << 20, "--max-request-bytes", help="Largest request body (413 past it)."),
                  max_source_bytes: int = typer.Option(256 << 10, "--max-source-bytes", help="Largest candidate source (413 past it)."),
                  request_timeout: float = typer.Option(900.0, "--request-timeout", help="Seconds a request waits for its verdict (504 past it)."),
                  devices: Optional[str] = typer.Option(None, "--devices", help="Devices to evaluate on, each with its own workers: 0,1,2,3 or all (default: one, unpinned)."),
                  check_workers: int = typer.Option(2, "--check-workers", help="Correctness-only workers per device (timed candidates get one per device).")) -> None:
    """Serve evaluations over HTTP (POST /v1/evaluate): kgb as a reward function."""
    import os

    from kgb_core.serve import ServeLimits, serve
    from kgb_core.service import EvaluationService

    token = None
    if token_env:
        token = os.environ.get(token_env, "")
        if not token:
            raise UserError(f"--token-env {token_env}: that environment variable is unset or "
                            f"empty")
    hidden = (str(Path(db).resolve()),) if db else ()
    service = EvaluationService(backend, emulate=emulate, timeout_s=timeout, devices=devices,
                                check_workers_per_device=check_workers, hidden_paths=hidden)
    if service.note:
        typer.echo(service.note, err=True)
    limits = ServeLimits(max_queue=max_queue, max_batch=max_batch,
                         max_request_bytes=max_request_bytes, max_source_bytes=max_source_bytes,
                         request_timeout_s=request_timeout)
    serve(service, limits, host=host, port=port, token=token, db=db,
          announce=lambda line: typer.echo(line, err=True))


def main() -> None:
    """Entry point of the console script: Typer handles usage errors (exit 2), we handle ours."""
    try:
        registry().add_cli(app)
        app()
    except UserError as error:
        typer.echo(f"error: {error}", err=True)
        sys.exit(2)
