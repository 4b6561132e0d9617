"""The ``llm`` method: one-shot prompting of a chat endpoint, ``samples`` answers per operator
(pass@k). Endpoint, retries, token accounting and the answer cache: ``kgb_methods/chat.py``."""

from __future__ import annotations

from typing import Any, Mapping

from kgb_core import hookimpl
from kgb_core.backends import Quirks
from kgb_core.candidates import Candidate, extract_code
from kgb_core.errors import UserError
from kgb_core.methods import GenerationContext, Method, MethodOption, option_defaults
from kgb_core.operators import OperatorSpec
from kgb_methods.chat import CHAT_OPTIONS, ChatSession, chat_options
from kgb_methods.prompts import render_prompt

LLM_OPTIONS = (MethodOption("samples", 1, "answers per operator (pass@k)"),)
LLM_DEFAULTS = option_defaults(LLM_OPTIONS)


class LlmMethod(Method):
    name = "llm"
    description = "one-shot prompting of an OpenAI-compatible chat endpoint (pass@k via samples)"
    options = CHAT_OPTIONS + LLM_OPTIONS

    def __init__(self) -> None:
        self._session = ChatSession()
    def _options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        options = chat_options(given, LLM_DEFAULTS, self.name)
        if int(options["samples"]) < 1:
            raise UserError("method llm: samples must be at least 1")
        return options

    def samples(self, options: Mapping[str, Any]) -> int:
        return int(self._options(options)["samples"])

    def generate(self, op: OperatorSpec, quirks: Quirks, ctx: GenerationContext) -> list[Candidate]:
        options = self._options(ctx.options)
        prompt = render_prompt(op, ctx.backend_label, quirks, options["template"])
        candidates = []
        for sample in range(int(options["samples"])):
            answer = self._session.ask(options, [{"role": "user", "content": prompt}], sample, ctx)
            candidates.append(Candidate(
                source=extract_code(answer.text), sample=sample,
                prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens,
                cost_usd=answer.cost(options), origin=f"{options['provider']}:{options['model']}",
                generation={"prompt": prompt, "answer": answer.text,
                            "tokens_estimated": answer.estimated, "cached": answer.cached,
                            "latency_s": round(answer.latency_s, 3),
                            **({"rate_limited": answer.rate_limited,
                                "rate_limit_wait_s": answer.rate_limit_wait_s}
                               if answer.rate_limited else {})}))
        return candidates


@hookimpl
def kgb_register_methods(register):
    register(LlmMethod())
