"""The ``agent`` method: generate, hear what the harness found, try again (AutoKernel-style).

Each turn sends the conversation so far to the chat endpoint, evaluates the kernel in the
answer with the harness's own evaluator (the method never judges), and answers the model with
what was found: the verdict and its message (a compile error, the case that mismatched and by
how much), or the measured speedup when the kernel passed. It stops after ``max_turns``, when
``max_tokens_per_op`` is spent, or (with ``improve_after_pass = false``) at the first pass. The
best passing kernel (fastest) is the candidate the sweep then evaluates for the record; every
turn is kept in the candidate's generation record.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any, Mapping

from kgb_core import hookimpl
from kgb_core.backends import Quirks
from kgb_core.candidates import Candidate, extract_code
from kgb_core.errors import UserError
from kgb_core.methods import GenerationContext, Method, MethodOption, option_defaults
from kgb_core.operators import OperatorSpec
from kgb_methods.chat import CHAT_OPTIONS, ChatSession, chat_options
from kgb_methods.prompts import TEMPLATES, render_prompt

AGENT_OPTIONS = (
    MethodOption("max_turns", 5, "turns per operator: an answer, the harness's verdict back"),
    MethodOption("max_tokens_per_op", 200_000, "tokens per operator before the agent stops"),
    MethodOption("improve_after_pass", True, "keep asking for a faster kernel once one passes"),
    MethodOption("feedback_template", "agent_feedback", "the template of the verdict it gets "
                 "back (kgb_methods/prompts/)"),
)
AGENT_DEFAULTS: dict[str, Any] = option_defaults(AGENT_OPTIONS)


def _feedback(result: Any, template_name: str) -> str:
    if result.passed:
        if result.speedup:
            outcome = (f"Your kernel passed every check. Measured speedup over PyTorch: "
                       f"{result.speedup:.3g}x ({result.timing_label}). Make it faster if you "
                       f"can, keeping it correct.")
        else:
            outcome = "Your kernel passed every check. Make it faster if you can."
    else:
        case = result.failing_case or {}
        where = (f" (case {case.get('case')}, dtype {case.get('dtype')})"
                 if case.get("case") else "")
        outcome = (f"Your kernel failed: {result.verdict}{where}.\n\n{result.message}\n\n"
                   f"Fix it and answer with the whole corrected file.")
    text = (Path(TEMPLATES) / f"{template_name}.md").read_text()
    return string.Template(text).substitute(outcome=outcome)


class AgentMethod(Method):
    name = "agent"
    description = "iterative: generate, get the harness's verdict and timing back, improve"
    options = CHAT_OPTIONS + AGENT_OPTIONS

    def __init__(self) -> None:
        self._session = ChatSession()

    def _options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        options = chat_options(given, AGENT_DEFAULTS, self.name)
        if int(options["max_turns"]) < 1:
            raise UserError("method agent: max_turns must be at least 1")
        return options

    def generate(self, op: OperatorSpec, quirks: Quirks, ctx: GenerationContext) -> list[Candidate]:
        options = self._options(ctx.options)
        if ctx.evaluate is None:
            raise UserError("method agent needs the harness's evaluator (run it with `kgb run`)")
        messages = [{"role": "user",
                     "content": render_prompt(op, ctx.backend_label, quirks, options["template"])}]
        turns: list[dict[str, Any]] = []
        prompt_tokens = completion_tokens = 0
        cost = 0.0
        best: tuple[float, str] | None = None
        last_source = ""
        for turn in range(1, int(options["max_turns"]) + 1):
            answer = self._session.ask(options, messages, sample=0, ctx=ctx)
            prompt_tokens += answer.prompt_tokens
            completion_tokens += answer.completion_tokens
            cost += answer.cost(options)
            last_source = extract_code(answer.text)
            result = ctx.evaluate(last_source)
            turns.append({"turn": turn, "verdict": result.verdict, "speedup": result.speedup,
                          "message": result.message[:500], "answer": answer.text,
                          "code": last_source,
                          "prompt_tokens": answer.prompt_tokens,
                          "completion_tokens": answer.completion_tokens,
                          "tokens_estimated": answer.estimated, "cached": answer.cached})
            if result.passed:
                score = result.speedup or 0.0
                if best is None or score > best[0]:
                    best = (score, last_source)
                if not options["improve_after_pass"]:
                    break
            if prompt_tokens + completion_tokens >= int(options["max_tokens_per_op"]):
                turns[-1]["stopped"] = "max_tokens_per_op reached"
                break
            messages += [{"role": "assistant", "content": answer.text},
                         {"role": "user", "content": _feedback(result,
                                                               options["feedback_template"])}]
        first_pass = next((t["turn"] for t in turns if t["verdict"] == "pass"), None)
        return [Candidate(
            source=best[1] if best else last_source, sample=0, prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens, cost_usd=cost,
            origin=f"{options['provider']}:{options['model']}",
            generation={"turns": turns, "first_pass_turn": first_pass,
                        "prompt": messages[0]["content"]})]


@hookimpl
def kgb_register_methods(register):
    register(AgentMethod())
