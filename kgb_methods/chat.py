"""Chat endpoints shared by the model-driven methods (``llm``, ``agent``).

Any server that speaks OpenAI's chat-completions protocol works (OpenAI, vLLM, SGLang, a LiteLLM
proxy, Ollama, DeepSeek, Qwen...), through the official ``openai`` SDK, and Anthropic's models
through the ``anthropic`` SDK (``provider = "anthropic"``); both are the optional extra
``pip install "kernelgenbench[llm]"``. The SDKs retry 429 and 5xx answers with backoff
(``max_retries``). Where the endpoint reports no usage, tokens are estimated (about 4
characters a token) and marked so. Answers are cached by (provider, endpoint, model, messages,
sampling parameters, sample index) in the run's store, so a resumed sweep spends no tokens twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from kgb_core.errors import UserError
from kgb_core.methods import GenerationContext

CHAT_DEFAULTS: dict[str, Any] = {
    "provider": "openai",
    "base_url": None,
    "model": None,
    "api_key_env": "OPENAI_API_KEY",
    "temperature": 0.0,
    "max_tokens": 4096,
    "price_input_per_mtok": 0.0,
    "price_output_per_mtok": 0.0,
    "timeout_s": 600.0,
    "max_retries": 3,
    "template": "triton_kernel",
    "cache": True,
}
CHARS_PER_TOKEN = 4  # the estimate used only when an endpoint reports no usage


@dataclass
class ChatAnswer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    latency_s: float
    cached: bool = False

    def cost(self, options: Mapping[str, Any]) -> float:
        return (self.prompt_tokens * float(options["price_input_per_mtok"])
                + self.completion_tokens * float(options["price_output_per_mtok"])) / 1e6


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


class OpenAIChat:
    """Chat completions through the ``openai`` SDK."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        try:
            import openai
        except ImportError:
            raise UserError("methods llm and agent need the openai SDK: pip install "
                            "\"kernelgenbench[llm]\"") from None
        key_variable = options["api_key_env"]
        api_key = os.environ.get(key_variable)
        if not api_key:
            raise UserError(f"the API key variable {key_variable} is not set (set it, or name "
                            f"another with api_key_env under [method])")
        self.options = options
        self.client = openai.OpenAI(base_url=options["base_url"], api_key=api_key,
                                    max_retries=int(options["max_retries"]),
                                    timeout=float(options["timeout_s"]))

    def chat(self, messages: list[dict[str, str]]) -> ChatAnswer:
        started = time.monotonic()
        response = self.client.chat.completions.create(
            model=self.options["model"], messages=messages,
            temperature=float(self.options["temperature"]),
            max_tokens=int(self.options["max_tokens"]))
        latency = time.monotonic() - started
        text = (response.choices[0].message.content or "") if response.choices else ""
        usage = getattr(response, "usage", None)
        if usage is not None and usage.prompt_tokens is not None:
            return ChatAnswer(text, int(usage.prompt_tokens), int(usage.completion_tokens or 0),
                              estimated=False, latency_s=latency)
        prompt_text = "".join(m["content"] for m in messages)
        return ChatAnswer(text, _estimate_tokens(prompt_text), _estimate_tokens(text),
                          estimated=True, latency_s=latency)


class AnthropicChat:
    """Anthropic's Messages API through the ``anthropic`` SDK (same retries and accounting)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        try:
            import anthropic
        except ImportError:
            raise UserError("provider anthropic needs the anthropic SDK: pip install "
                            "\"kernelgenbench[llm]\"") from None
        key_variable = options["api_key_env"]
        if options["api_key_env"] == CHAT_DEFAULTS["api_key_env"]:
            key_variable = "ANTHROPIC_API_KEY"
        api_key = os.environ.get(key_variable)
        if not api_key:
            raise UserError(f"the API key variable {key_variable} is not set (set it, or name "
                            f"another with api_key_env under [method])")
        self.options = options
        self.client = anthropic.Anthropic(base_url=options["base_url"], api_key=api_key,
                                          max_retries=int(options["max_retries"]),
                                          timeout=float(options["timeout_s"]))

    def chat(self, messages: list[dict[str, str]]) -> ChatAnswer:
        started = time.monotonic()
        # Recent SDKs no longer take temperature as an argument (2.16 does not); the API still
        # reads it from the request body, where extra_body puts it whatever the SDK version.
        response = self.client.messages.create(
            model=self.options["model"], messages=messages,
            max_tokens=int(self.options["max_tokens"]),
            extra_body={"temperature": float(self.options["temperature"])})
        latency = time.monotonic() - started
        text = "".join(getattr(block, "text", "") for block in response.content or [])
        usage = getattr(response, "usage", None)
        if usage is not None and getattr(usage, "input_tokens", None) is not None:
            return ChatAnswer(text, int(usage.input_tokens), int(usage.output_tokens or 0),
                              estimated=False, latency_s=latency)
        prompt_text = "".join(m["content"] for m in messages)
        return ChatAnswer(text, _estimate_tokens(prompt_text), _estimate_tokens(text),
                          estimated=True, latency_s=latency)


PROVIDERS = {"openai": OpenAIChat, "anthropic": AnthropicChat}


def chat_options(given: Mapping[str, Any], extra_defaults: Mapping[str, Any],
                 method: str) -> dict[str, Any]:
    options = {**CHAT_DEFAULTS, **extra_defaults, **given}
    if not options["model"]:
        raise UserError(f"method {method} needs a model: [method] model = \"...\" in the run "
                        f"config")
    if options["provider"] not in PROVIDERS:
        raise UserError(f"method {method}: provider {options['provider']!r} is not supported; "
                        f"known: {', '.join(sorted(PROVIDERS))}")
    return options


class ChatSession:
    """One client per set of options, and the answer cache in front of it."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}

    def _client(self, options: Mapping[str, Any]) -> Any:
        key = json.dumps(options, sort_keys=True, default=str)
        if key not in self._clients:
            self._clients[key] = PROVIDERS[options["provider"]](options)
        return self._clients[key]

    def ask(self, options: Mapping[str, Any], messages: list[dict[str, str]], sample: int,
            ctx: GenerationContext) -> ChatAnswer:
        cache_key = hashlib.sha256(json.dumps({
            "provider": options["provider"], "base_url": options["base_url"],
            "model": options["model"], "temperature": options["temperature"],
            "max_tokens": options["max_tokens"], "messages": messages, "sample": sample,
        }, sort_keys=True).encode()).hexdigest()
        use_cache = bool(options["cache"]) and ctx.cache is not None
        if use_cache:
            hit = ctx.cache.get(cache_key)
            if hit is not None:
                return ChatAnswer(**{**hit, "cached": True})
        answer = self._client(options).chat(messages)
        if use_cache:
            ctx.cache.put(cache_key, {k: v for k, v in asdict(answer).items() if k != "cached"})
        return answer
