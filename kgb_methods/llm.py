"""The ``llm`` method: one-shot prompting of an OpenAI-compatible chat endpoint (pass@k).

Any server that speaks OpenAI's chat-completions protocol works (OpenAI, vLLM, SGLang, a LiteLLM
proxy, Ollama, DeepSeek, Qwen...), through the official ``openai`` SDK, an optional extra:
``pip install "kernelgenbench[llm]"``. The SDK retries 429 and 5xx answers with backoff
(``max_retries``). Every answer keeps its prompt, raw text, latency and token counts; where the
endpoint reports no usage, tokens are estimated (about 4 characters a token) and marked so.

Not built yet: the Anthropic provider, a response cache for resumed sweeps, and a run budget.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Mapping

from kgb_core import hookimpl
from kgb_core.backends import Quirks
from kgb_core.candidates import Candidate, extract_code
from kgb_core.errors import UserError
from kgb_core.methods import GenerationContext, Method
from kgb_core.operators import OperatorSpec
from kgb_methods.prompts import render_prompt

DEFAULTS: dict[str, Any] = {
    "provider": "openai",
    "base_url": None,
    "model": None,
    "api_key_env": "OPENAI_API_KEY",
    "temperature": 0.0,
    "max_tokens": 4096,
    "samples": 1,
    "price_input_per_mtok": 0.0,
    "price_output_per_mtok": 0.0,
    "timeout_s": 600.0,
    "max_retries": 3,
    "template": "triton_kernel",
}
CHARS_PER_TOKEN = 4  # the estimate used only when an endpoint reports no usage


@dataclass
class ChatAnswer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    latency_s: float


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


class OpenAIChat:
    """Chat completions through the ``openai`` SDK."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        try:
            import openai
        except ImportError:
            raise UserError("method llm needs the openai SDK: pip install "
                            "\"kernelgenbench[llm]\"") from None
        key_variable = options["api_key_env"]
        api_key = os.environ.get(key_variable)
        if not api_key:
            raise UserError(f"method llm: the API key variable {key_variable} is not set "
                            f"(set it, or name another with api_key_env)")
        self.options = options
        self.client = openai.OpenAI(base_url=options["base_url"], api_key=api_key,
                                    max_retries=int(options["max_retries"]),
                                    timeout=float(options["timeout_s"]))

    def complete(self, prompt: str) -> ChatAnswer:
        started = time.monotonic()
        response = self.client.chat.completions.create(
            model=self.options["model"], messages=[{"role": "user", "content": prompt}],
            temperature=float(self.options["temperature"]),
            max_tokens=int(self.options["max_tokens"]))
        latency = time.monotonic() - started
        text = (response.choices[0].message.content or "") if response.choices else ""
        usage = getattr(response, "usage", None)
        if usage is not None and usage.prompt_tokens is not None:
            return ChatAnswer(text, int(usage.prompt_tokens), int(usage.completion_tokens or 0),
                              estimated=False, latency_s=latency)
        return ChatAnswer(text, _estimate_tokens(prompt), _estimate_tokens(text),
                          estimated=True, latency_s=latency)


PROVIDERS = {"openai": OpenAIChat}


class LlmMethod(Method):
    name = "llm"
    description = "one-shot prompting of an OpenAI-compatible chat endpoint (pass@k via samples)"

    def __init__(self) -> None:
        self._clients: dict[tuple, Any] = {}

    def option_keys(self) -> frozenset[str]:
        return frozenset(DEFAULTS)

    def _options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        options = {**DEFAULTS, **given}
        if not options["model"]:
            raise UserError("method llm needs a model: [method] model = \"...\" in the run config")
        if options["provider"] not in PROVIDERS:
            raise UserError(f"method llm: provider {options['provider']!r} is not supported; "
                            f"known: {', '.join(sorted(PROVIDERS))}")
        if int(options["samples"]) < 1:
            raise UserError("method llm: samples must be at least 1")
        return options

    def samples(self, options: Mapping[str, Any]) -> int:
        return int(self._options(options)["samples"])

    def _client(self, options: dict[str, Any]) -> Any:
        key = tuple(sorted((k, str(v)) for k, v in options.items()))
        if key not in self._clients:
            self._clients[key] = PROVIDERS[options["provider"]](options)
        return self._clients[key]

    def generate(self, op: OperatorSpec, quirks: Quirks, ctx: GenerationContext) -> list[Candidate]:
        options = self._options(ctx.options)
        client = self._client(options)
        prompt = render_prompt(op, ctx.backend_name, quirks, options["template"])
        candidates = []
        for sample in range(int(options["samples"])):
            answer = client.complete(prompt)
            cost = (answer.prompt_tokens * float(options["price_input_per_mtok"])
                    + answer.completion_tokens * float(options["price_output_per_mtok"])) / 1e6
            candidates.append(Candidate(
                source=extract_code(answer.text), sample=sample,
                prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens,
                cost_usd=cost, origin=f"{options['provider']}:{options['model']}",
                generation={"prompt": prompt, "answer": answer.text,
                            "tokens_estimated": answer.estimated,
                            "latency_s": round(answer.latency_s, 3)}))
        return candidates


@hookimpl
def kgb_register_methods(register):
    register(LlmMethod())
