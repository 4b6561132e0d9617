"""A sweep: operators x one method x one backend, every result stored as it finishes.

The plan (what to run) is resolved and checked before anything starts, so a typo in an
operator name fails in a second, not after an hour. With ``resume`` the latest run with the
same plan is continued and every (op, backend, method, sample) already stored is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from kgb_core.backends import Backend
from kgb_core.config import RunConfig, validate_method_options
from kgb_core.environment import describe_environment
from kgb_core.errors import UserError
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.pool import EvaluationSettings, Evaluator
from kgb_core.evaluation.results import EvalResult
from kgb_core.methods import GenerationContext, Method
from kgb_core.operators import OperatorSpec
from kgb_core.plugins import Registry
from kgb_core.progress import Progress
from kgb_core.store import ResultKey, ResultStore

@dataclass
class SweepPlan:
    config: RunConfig
    operators: list[OperatorSpec]
    method: Method
    backend: Backend
    backend_note: str = ""

    def describe(self) -> dict[str, Any]:
        """What identifies this run for --resume: the work asked for, not where results go."""
        return {
            "operators": [op.id for op in self.operators],
            "method": self.method.name,
            "method_options": self.config.method_options,
            "backend": self.backend.name,
            "seeds": list(self.config.seeds),
            "timing": self.config.timing,
            "timing_settings": self.config.timing_settings,
            # Only when set, so that the plan keys of runs made before emulation existed are
            # unchanged and --resume still finds them.
            **({"emulates": self.backend.emulates} if self.backend.emulates else {}),
        }


@dataclass
class SweepOutcome:
    run_id: int
    resumed: bool
    evaluated: int = 0
    skipped_done: int = 0
    results: list[EvalResult] = field(default_factory=list)
    stopped_by_budget: str = ""


def _over_budget(config: RunConfig, store: ResultStore, run_id: int) -> str:
    """What the run has spent, when that reaches its budget; empty while it does not."""
    if config.token_budget is None and config.cost_budget_usd is None:
        return ""
    tokens, cost = store.run_usage(run_id)
    if config.token_budget is not None and tokens >= config.token_budget:
        return f"{tokens} tokens of a {config.token_budget}-token budget"
    if config.cost_budget_usd is not None and cost >= config.cost_budget_usd:
        return f"${cost:.4f} of a ${config.cost_budget_usd:g} budget"
    return ""


def resolve_backend(registry: Registry, name: str | None,
                    emulate: str | None = None) -> tuple[Backend, str]:
    """The backend asked for (which must be available), or the auto-detected one, with why.

    With ``emulate`` the result is that backend (the CPU interpreter unless another is named)
    running with the quirks of the backend ``emulate`` names (``kgb_core.emulation``).
    """
    if emulate:
        from kgb_core.emulation import emulate as make_emulating

        host_name = name or "cpu"
        backend = make_emulating(registry, host_name, emulate)
        availability = backend.safe_probe()
        if not availability.available:
            raise UserError(f"backend {host_name!r} is not available here: {availability.reason}")
        note = (f"backend: {backend.label}: {emulate}'s quirks applied to {host_name}; results "
                f"are labelled as emulation and are no {emulate} hardware results")
        return backend, note
    if name:
        backend = registry.backend(name)
        availability = backend.safe_probe()
        if not availability.available:
            raise UserError(f"backend {name!r} is not available here: {availability.reason} "
                            f"(`kgb doctor --backend {name}` shows what was probed)")
        return backend, ""
    available, reasons = [], []
    for backend in registry.backends():
        if backend.name == "cpu" or not backend.auto_detect:
            continue
        availability = backend.safe_probe()
        (available if availability.available else reasons).append(
            (backend, availability.reason))
    if len(available) > 1:
        names = ", ".join(b.name for b, _ in available)
        raise UserError(f"several backends are available ({names}); choose one with --backend")
    if available:
        backend, reason = available[0]
        return backend, f"backend: picked {backend.name!r} ({reason}); pass --backend to choose"
    cpu = registry.backend("cpu")
    why = "; ".join(f"{b.name}: {r}" for b, r in reasons) or "no GPU backend installed"
    return cpu, f"backend: picked 'cpu' (Triton's interpreter) because no GPU backend is available ({why})"


def plan_sweep(config: RunConfig, registry: Registry) -> SweepPlan:
    method = registry.method(config.method)
    validate_method_options(config, method.option_keys())
    backend, note = resolve_backend(registry, config.backend, config.emulate)
    operators: list[OperatorSpec] = []
    if config.ops:
        operators = [registry.operator(op_id) for op_id in config.ops]
        if config.sources:
            outside = [op.id for op in operators if op.source not in config.sources]
            if outside:
                raise UserError(f"operators {outside} are not in the sources {config.sources}")
    else:
        operators = registry.operators(config.sources, config.tags)
    if config.tags:
        operators = [op for op in operators if set(config.tags) <= op.tags]
    if not operators:
        raise UserError("the selection matches no operator (check --source/--op/--tag; "
                        "`kgb ops` lists them)")
    unique = list({op.id: op for op in operators}.values())
    return SweepPlan(config=config, operators=unique, method=method, backend=backend,
                     backend_note=note)


def evaluation_settings(config: RunConfig) -> EvaluationSettings:
    return EvaluationSettings(seeds=tuple(config.seeds), timeout_s=config.timeout_s,
                              timing=config.timing, timing_settings=dict(config.timing_settings),
                              worker_reuse=config.worker_reuse)


def run_sweep(plan: SweepPlan, registry: Registry, store: ResultStore, *, resume: bool,
              progress_factory: Callable[[int], Progress] = Progress,
              notes: Callable[[str], None] = lambda message: None) -> SweepOutcome:
    description = plan.describe()
    run_id = store.latest_run_for(description) if resume else None
    done: set[ResultKey] = store.done_keys(run_id) if run_id is not None else set()
    if resume and run_id is None:
        notes("resume: no earlier run with this plan in the store; starting a new run")
    samples = plan.method.samples(plan.config.method_options)
    denied = plan.backend.quirks.denied_operators
    pending = [op for op in plan.operators
               if any(ResultKey(op.id, plan.backend.name, plan.method.name, sample) not in done
                      for sample in range(1 if op.id in denied else samples))]
    with Evaluator.for_backend(plan.backend, evaluation_settings(plan.config)) as evaluator:
        worker_info = evaluator.start()
        if run_id is None:
            run_id = store.start_run(description, describe_environment(registry, worker_info))
        else:
            notes(f"resume: continuing run {run_id}; {len(plan.operators) - len(pending)} "
                  f"operators already done")
        outcome = SweepOutcome(run_id=run_id, resumed=bool(done),
                               skipped_done=len(plan.operators) - len(pending))
        progress = progress_factory(len(pending))
        for index, op in enumerate(pending):
            spent = _over_budget(plan.config, store, run_id)
            if spent:
                outcome.stopped_by_budget = (f"budget reached ({spent}); {len(pending) - index} "
                                             f"operators not attempted; raise the budget and "
                                             f"run again with --resume")
                notes(outcome.stopped_by_budget)
                return outcome
            results = _run_operator(op, plan, evaluator, store, run_id, done)
            outcome.results.extend(results)
            outcome.evaluated += len(results)
            passed = any(r.passed for r in results)
            verdict = verdicts.PASS if passed else (results[-1].verdict if results else "done")
            progress.advance(op.id, verdict, passed=passed)
    store.finish_run(run_id)
    return outcome


def _run_operator(op: OperatorSpec, plan: SweepPlan, evaluator: Evaluator, store: ResultStore,
                  run_id: int, done: set[ResultKey]) -> list[EvalResult]:
    backend, method = plan.backend, plan.method
    reason = backend.quirks.denied_operators.get(op.id)
    if reason is not None:  # known not to run there: no prompt, no candidate, no verdict
        result = EvalResult(op=op.id, backend=backend.name, emulates=backend.emulates,
                            verdict=verdicts.SKIPPED_DENIED, method=method.name, sample=0,
                            message=f"{op.id} is on the deny-list of {backend.label}: {reason}")
        store.record(run_id, op.source, result, None)
        return [result]
    context = GenerationContext(
        options=plan.config.method_options, backend_name=backend.name,
        emulates=backend.emulates,
        evaluate=lambda source: evaluator.evaluate(op.id, source, method=method.name,
                                                   sample=-1),
        cache=store)
    try:
        candidates = method.generate(op, backend.quirks, context)
    except UserError:
        raise
    except Exception as error:  # a method failing on one op must not end the sweep
        candidates = []
        failure = f"method {method.name!r} failed: {type(error).__name__}: {error}"
    else:
        failure = f"method {method.name!r} produced no candidate for {op.id}"
    if not candidates:
        result = EvalResult(op=op.id, backend=backend.name, emulates=backend.emulates,
                            verdict=verdicts.NO_CANDIDATE,
                            message=failure, method=method.name, sample=0)
        store.record(run_id, op.source, result, None)
        return [result]
    results = []
    for candidate in candidates:
        if ResultKey(op.id, backend.name, method.name, candidate.sample) in done:
            continue
        result = evaluator.evaluate(op.id, candidate.source, method=method.name,
                                    sample=candidate.sample)
        store.record(run_id, op.source, result, candidate)
        results.append(result)
    return results


def evaluate_file(registry: Registry, op_id: str, source: str, backend: Backend,
                  settings: EvaluationSettings) -> EvalResult:
    """One candidate, one operator: what ``kgb eval`` does."""
    registry.operator(op_id)  # an unknown op fails here, before a worker starts
    with Evaluator.for_backend(backend, settings) as evaluator:
        return evaluator.evaluate(op_id, source, method="file")

