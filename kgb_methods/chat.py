"""Chat endpoints shared by the model-driven methods (``llm``, ``agent``).

Any server that speaks OpenAI's chat-completions protocol works (OpenAI, vLLM, SGLang, a LiteLLM
proxy, Ollama, DeepSeek, Qwen...), through the official ``openai`` SDK, and Anthropic's models
through the ``anthropic`` SDK (``provider = "anthropic"``); both are the optional extra
``pip install "kernelgenbench[llm]"``. The SDKs retry 429 and 5xx answers with backoff
(``max_retries``). Where the endpoint reports no usage, tokens are estimated (about 4
characters a token) and marked so. Answers are cached by (provider, endpoint, model, messages,
sampling parameters, sample index) in the run's store, so a resumed sweep spends no tokens twice.

A concurrent sweep (``--concurrency N``) calls one endpoint from several threads. Per endpoint
(provider and base URL) kgb then keeps, across those threads:

- at most ``max_concurrent_requests`` requests in flight (0: no limit beyond the sweep's
  concurrency);
- one shared cool-down: when a request still fails with HTTP 429 after the SDK's own retries
  (which honour ``Retry-After`` per request, up to two minutes, openai/_base_client.py), every
  thread waits out the server's ``Retry-After`` (or ``retry-after-ms``; without either, an
  exponential backoff from 1 s, at most 60 s, with jitter) before its next request, and the
  request is tried again, up to ``rate_limit_retries`` times, so that a burst of 429s in a long
  sweep delays answers instead of turning them into ``no_candidate`` rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from kgb_core.errors import UserError
from kgb_core.methods import GenerationContext, MethodOption, option_defaults

# The options every chat-endpoint method (llm, agent) takes under [method].
CHAT_OPTIONS = (
    MethodOption("provider", "openai", "the endpoint's API: openai (any OpenAI-compatible "
                 "server) or anthropic"),
    MethodOption("base_url", None, "the endpoint's URL (the SDK's default where unset)", (str,)),
    MethodOption("model", None, "the model's name at the endpoint (required)", (str,)),
    MethodOption("api_key_env", "OPENAI_API_KEY", "the environment variable holding the key"),
    MethodOption("temperature", 0.0, "sampling temperature"),
    MethodOption("max_tokens", 4096, "the answer's token limit"),
    MethodOption("price_input_per_mtok", 0.0, "dollars per million prompt tokens (the cost)"),
    MethodOption("price_output_per_mtok", 0.0, "dollars per million answer tokens"),
    MethodOption("timeout_s", 600.0, "seconds one request may take"),
    MethodOption("max_retries", 3, "retries of a failed request (5xx, connection), with backoff"),
    MethodOption("template", "triton_kernel", "the prompt template (kgb_methods/prompts/)"),
    MethodOption("cache", True, "reuse a stored answer to the same request instead of paying "
                 "for it again"),
    MethodOption("max_concurrent_requests", 0, "requests in flight at once (0: no limit)"),
    MethodOption("rate_limit_retries", 5, "retries of a 429, after the endpoint's Retry-After"),
)
CHAT_DEFAULTS: dict[str, Any] = option_defaults(CHAT_OPTIONS)
RATE_LIMIT_STATUS = 429
MAX_COOL_DOWN_S = 600.0  # a Retry-After longer than this is taken as this
CHARS_PER_TOKEN = 4  # the estimate used only when an endpoint reports no usage


@dataclass
class ChatAnswer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    latency_s: float
    cached: bool = False
    # Seconds this answer waited in the endpoint's shared 429 cool-down, and how many times.
    rate_limit_wait_s: float = 0.0
    rate_limited: int = 0

    def cost(self, options: Mapping[str, Any]) -> float:
        return (self.prompt_tokens * float(options["price_input_per_mtok"])
                + self.completion_tokens * float(options["price_output_per_mtok"])) / 1e6


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


def _api_key(options: Mapping[str, Any], default_variable: str) -> str:
    """The key from the variable ``api_key_env`` names (a provider's own one by default)."""
    variable = options["api_key_env"]
    if variable == CHAT_DEFAULTS["api_key_env"]:
        variable = default_variable
    api_key = os.environ.get(variable)
    if not api_key:
        raise UserError(f"the API key variable {variable} is not set (set it, or name another "
                        f"with api_key_env under [method])")
    return api_key


def _answer(text: str, usage: tuple[Any, Any] | None, messages: list[dict[str, str]],
            latency_s: float) -> ChatAnswer:
    """Token counts as the endpoint reported them, or estimated (and marked) if it did not."""
    if usage is not None and usage[0] is not None:
        return ChatAnswer(text, int(usage[0]), int(usage[1] or 0), estimated=False,
                          latency_s=latency_s)
    prompt_text = "".join(m["content"] for m in messages)
    return ChatAnswer(text, _estimate_tokens(prompt_text), _estimate_tokens(text),
                      estimated=True, latency_s=latency_s)


def _sdk(module: str, provider: str) -> Any:
    try:
        return __import__(module)
    except ImportError:
        raise UserError(f"provider {provider} needs the {module} SDK: pip install "
                        f"\"kernelgenbench[llm]\"") from None


class OpenAIChat:
    """Chat completions through the ``openai`` SDK."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        openai = _sdk("openai", "openai")
        self.options = options
        self.client = openai.OpenAI(base_url=options["base_url"],
                                    api_key=_api_key(options, "OPENAI_API_KEY"),
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
        return _answer(text, (usage.prompt_tokens, usage.completion_tokens) if usage else None,
                       messages, latency)


class AnthropicChat:
    """Anthropic's Messages API through the ``anthropic`` SDK (same retries and accounting)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        anthropic = _sdk("anthropic", "anthropic")
        self.options = options
        self.client = anthropic.Anthropic(base_url=options["base_url"],
                                          api_key=_api_key(options, "ANTHROPIC_API_KEY"),
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
        return _answer(text, (getattr(usage, "input_tokens", None),
                              getattr(usage, "output_tokens", None)) if usage else None,
                       messages, latency)


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


def _retry_after_s(error: BaseException) -> float | None:
    """The server's Retry-After (``retry-after-ms`` first, as the SDKs read it), in seconds."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue  # an HTTP date; rare for rate limits, left to the backoff
        if seconds >= 0:
            return min(seconds, MAX_COOL_DOWN_S)
    return None


class EndpointGate:
    """What every thread talking to one endpoint shares: a limit on requests in flight and
    the cool-down after a 429."""

    def __init__(self, limit: int) -> None:
        self._slots = threading.BoundedSemaphore(limit) if limit > 0 else None
        self._lock = threading.Lock()
        self.resume_at = 0.0  # time.monotonic() before which no request is sent
        self.rate_limited = 0

    def wait_for_cool_down(self) -> float:
        waited = 0.0
        while True:
            with self._lock:
                remaining = self.resume_at - time.monotonic()
            if remaining <= 0:
                return waited
            time.sleep(remaining)
            waited += remaining

    def cool_down(self, error: BaseException, attempt: int) -> None:
        delay = _retry_after_s(error)
        if delay is None:
            delay = min(60.0, 2.0 ** attempt) * (1 - 0.25 * random.random())
        with self._lock:
            self.rate_limited += 1
            self.resume_at = max(self.resume_at, time.monotonic() + delay)

    def __enter__(self) -> "EndpointGate":
        if self._slots is not None:
            self._slots.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._slots is not None:
            self._slots.release()


_GATES: dict[tuple[str, str, int], EndpointGate] = {}
_GATES_LOCK = threading.Lock()


def endpoint_gate(options: Mapping[str, Any]) -> EndpointGate:
    key = (str(options["provider"]), str(options["base_url"]),
           int(options["max_concurrent_requests"] or 0))
    with _GATES_LOCK:
        if key not in _GATES:
            _GATES[key] = EndpointGate(key[2])
        return _GATES[key]


def _status(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


class ChatSession:
    """One client per set of options, and the answer cache in front of it. Thread-safe: a
    concurrent sweep shares one session between its generation threads."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _client(self, options: Mapping[str, Any]) -> Any:
        key = json.dumps(options, sort_keys=True, default=str)
        with self._lock:
            if key not in self._clients:
                self._clients[key] = PROVIDERS[options["provider"]](options)
            return self._clients[key]

    def _chat(self, options: Mapping[str, Any], messages: list[dict[str, str]]) -> ChatAnswer:
        gate = endpoint_gate(options)
        client = self._client(options)
        retries = int(options["rate_limit_retries"])
        waited, limited = 0.0, 0
        for attempt in range(retries + 1):
            waited += gate.wait_for_cool_down()
            with gate:
                waited += gate.wait_for_cool_down()  # another thread may have hit a 429
                try:
                    answer = client.chat(messages)
                except Exception as error:
                    if _status(error) != RATE_LIMIT_STATUS or attempt == retries:
                        raise
                    gate.cool_down(error, attempt)
                    limited += 1
                    continue
            answer.rate_limit_wait_s, answer.rate_limited = round(waited, 3), limited
            return answer
        raise AssertionError("unreachable: the last attempt returns or raises")

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
        answer = self._chat(options, messages)
        if use_cache:
            ctx.cache.put(cache_key, {k: v for k, v in asdict(answer).items()
                                      if k not in ("cached", "rate_limit_wait_s", "rate_limited")})
        return answer
