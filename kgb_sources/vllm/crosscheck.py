"""``kgb vllm-crosscheck``: run each vllm spec's reference and vLLM's own op on the same inputs.

Where ``vllm`` is importable (a CUDA machine with vLLM installed), every spec that names its
vLLM callable (``VLLM_CALLABLES``, filled as the specs are built) is run twice per case, dtype
and seed, on clones of the same inputs: once through the reference, once through vLLM's op.
What is compared is what the checker compares (the spec's ``compared``, else the return value
and every argument in ``mutated_args``), at the spec's tolerance, so a reference that drifted
from vLLM's semantics shows here before it misjudges a candidate.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence

import typer

from kgb_core.api import LARGE, SMALL, InputContext, OperatorSpec, UserError


@dataclass
class CrosscheckRow:
    op: str
    case: str
    dtype: str
    verdict: str
    max_abs_error: float
    message: str = ""


def resolve(dotted: str) -> Callable[..., Any]:
    """``vllm._custom_ops.rms_norm`` or ``torch.ops._C.silu_and_mul`` as a callable.

    vllm._custom_ops is imported first: importing it loads vLLM's extension, which registers
    the ``torch.ops._C`` namespace.
    """
    importlib.import_module("vllm._custom_ops")
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            value = getattr(value, attribute)
        return value
    raise UserError(f"cannot resolve {dotted!r}")


def crosscheck_spec(spec: OperatorSpec, vllm_callable: Callable[..., Any], *, device: str,
                    tiers: Sequence[str] = (SMALL,), dtypes: Sequence[str] | None = None,
                    seeds: Sequence[int] = (0,)) -> list[CrosscheckRow]:
    """One row per case x dtype x seed: the reference against ``vllm_callable``."""
    from kgb_core.api import clone_tree, compare_outputs

    rows = []
    for case in spec.cases_in(tiers):
        for dtype in dtypes or spec.dtypes:
            if dtype not in spec.dtypes:
                continue
            for seed in seeds:
                inputs = list(spec.make_inputs(InputContext(case, dtype, seed, device)))
                theirs, ours = clone_tree(inputs), clone_tree(inputs)
                label = case.name + (f" (seed {seed})" if len(seeds) > 1 else "")
                try:
                    returned = vllm_callable(*theirs)
                except Exception as error:  # an op vLLM refuses is a finding, not a crash
                    rows.append(CrosscheckRow(spec.id, label, dtype, "vllm_error", 0.0,
                                              f"{type(error).__name__}: {error}"[:300]))
                    continue
                expected = spec.reference(*ours)
                tolerance = spec.tolerance(dtype, case.params)
                if spec.compared is not None:
                    comparison = compare_outputs(spec.compared(returned, theirs),
                                                 spec.compared(expected, ours), tolerance)
                else:
                    comparison = compare_outputs(returned, expected, tolerance)
                    for index in spec.mutated_args:
                        comparison.absorb(compare_outputs(
                            theirs[index], ours[index], tolerance,
                            where=f"argument {index} (written in place)"))
                rows.append(CrosscheckRow(spec.id, label, dtype, comparison.verdict,
                                          comparison.max_abs_error, comparison.message))
    return rows


def run_crosscheck(specs: Sequence[OperatorSpec], callables: dict[str, str], *, device: str,
                   tiers: Sequence[str], dtypes: Sequence[str] | None,
                   seeds: Sequence[int]) -> list[CrosscheckRow]:
    rows: list[CrosscheckRow] = []
    for spec in specs:
        dotted = callables.get(spec.name)
        if dotted is None:
            rows.append(CrosscheckRow(spec.id, "-", "-", "no_vllm_callable", 0.0))
            continue
        try:
            target = resolve(dotted)
        except (AttributeError, UserError) as error:
            rows.append(CrosscheckRow(spec.id, "-", "-", "missing_in_vllm", 0.0,
                                      f"{dotted}: {error}"[:300]))
            continue
        rows.extend(crosscheck_spec(spec, target, device=device, tiers=tiers, dtypes=dtypes,
                                    seeds=seeds))
    return rows


def _vllm_version() -> str:
    try:
        import vllm
    except Exception as error:  # ImportError, or a broken install raising anything else
        raise UserError(f"vllm is not importable here ({type(error).__name__}: {error}); "
                        f"run `kgb vllm-crosscheck` on a CUDA machine with vllm installed")
    return getattr(vllm, "__version__", "unknown")


def register_cli(app: Any, registry: Any) -> None:
    """``kgb vllm-crosscheck`` on ``app``, over the vllm operators of the CLI's ``registry``."""

    @app.command("vllm-crosscheck")
    def vllm_crosscheck_command(
            op: Optional[List[str]] = typer.Option(None, "--op", help="Operator id (repeatable); default every vllm op."),
            tier: Optional[List[str]] = typer.Option(None, "--tier", help="Case tier: small, large (repeatable; default small)."),
            dtype: Optional[List[str]] = typer.Option(None, "--dtype", help="Only this dtype (repeatable)."),
            seed: Optional[List[int]] = typer.Option(None, "--seed", help="Input seed (repeatable; default 0)."),
            device: str = typer.Option("cuda", "--device", help="Torch device the ops run on."),
            as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
        """Check every vllm spec's reference against vLLM's own op, on the same inputs."""
        import json

        from kgb_core.api import render_table
        from kgb_sources.vllm._build import VLLM_CALLABLES

        version = _vllm_version()
        specs = registry.operators(["vllm"])
        if op:
            wanted = set(op)
            specs = [s for s in specs if s.id in wanted or s.name in wanted]
            unknown = wanted - {s.id for s in specs} - {s.name for s in specs}
            if unknown:
                raise UserError(f"unknown vllm operator(s) {sorted(unknown)}; `kgb ops --source "
                                f"vllm` lists them")
        tiers = tuple(tier or (SMALL,))
        bad = [t for t in tiers if t not in (SMALL, LARGE)]
        if bad:
            raise UserError(f"unknown tier(s) {bad}; use small or large")
        rows = run_crosscheck(specs, dict(VLLM_CALLABLES), device=device, tiers=tiers,
                              dtypes=dtype or None, seeds=tuple(seed or (0,)))
        failed = [r for r in rows if r.verdict != "pass"]
        if as_json:
            typer.echo(json.dumps({"vllm": version, "rows": [r.__dict__ for r in rows]},
                                  indent=2))
        else:
            typer.echo(f"vllm {version} on {device}")
            typer.echo(render_table(
                ["op", "case", "dtype", "verdict", "max abs err", "message"],
                [[r.op, r.case, r.dtype, r.verdict, f"{r.max_abs_error:.3g}", r.message[:80]]
                 for r in rows]))
            typer.echo(f"\n{len(rows) - len(failed)} of {len(rows)} checks agree")
        raise typer.Exit(1 if failed else 0)
