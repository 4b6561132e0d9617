"""Every verdict the harness gives from outside a candidate's checks, made in one place.

The judge's stages (``kgb_core.evaluation.checker``) give the verdicts that come from looking at
outputs. These come from watching processes and channels instead: a runner that took too long,
died, ran out of host memory or forged a message; a judge process that died or hung; an
operator a backend's deny-list rules out. Each keeps what the checks had recorded so far.
"""

from __future__ import annotations

import signal

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.results import EvalResult


def _ended(result: EvalResult, verdict: str, message: str, log_tail: str = "") -> EvalResult:
    result.verdict, result.message = verdict, message
    if log_tail:
        result.log_tail = log_tail
    return result


def timed_out(result: EvalResult, timeout_s: float, who: str = "the runner",
              log_tail: str = "") -> EvalResult:
    return _ended(result, verdicts.TIMEOUT,
                  f"no answer within {timeout_s:g} s; {who} was killed", log_tail)


def died(result: EvalResult, what: str, returncode: int | None, log_tail: str = "") -> EvalResult:
    """``what`` says how it ended ("the runner process was killed by signal SIGSEGV")."""
    hint = (" (the system's out-of-memory killer sends SIGKILL)"
            if returncode == -signal.SIGKILL else "")
    return _ended(result, verdicts.CRASHED, what + hint, log_tail)


def out_of_memory(result: EvalResult, resident_bytes: int, limit_bytes: int | None,
                  who: str = "the runner", log_tail: str = "") -> EvalResult:
    limit = f", over the limit of {limit_bytes / (1 << 30):.1f} GiB" if limit_bytes else ""
    return _ended(result, verdicts.OOM, f"{who} held {resident_bytes / (1 << 30):.1f} GiB of "
                  f"host memory{limit}; it was killed", log_tail)


def forged_channel(result: EvalResult, what: str) -> EvalResult:
    return _ended(result, verdicts.TAMPERING, f"the runner's channel carried {what}; only the "
                  f"judge decides a verdict")


def left_processes(result: EvalResult, count: int) -> EvalResult:
    return _ended(result, verdicts.DEFERRED_WORK, f"the runner left {count} process(es) of its "
                  f"own running after it exited; they were killed")


def wrote_outside(result: EvalResult, names: list[str]) -> EvalResult:
    return _ended(result, verdicts.TAMPERING, f"the runner wrote outside its scratch folder: "
                  f"{', '.join(names[:5])}; it was removed")


def harness_fault(result: EvalResult, message: str, log_tail: str = "") -> EvalResult:
    return _ended(result, verdicts.HARNESS_ERROR, message, log_tail)


def denied(op: str, backend: str, backend_label: str, emulates: str, reason: str,
           method: str) -> EvalResult:
    """Known not to run there: no prompt, no candidate, no evaluation."""
    return EvalResult(op=op, backend=backend, emulates=emulates, verdict=verdicts.SKIPPED_DENIED,
                      method=method, sample=0,
                      message=f"{op} is on the deny-list of {backend_label}: {reason}")
