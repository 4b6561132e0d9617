"""What an agent program spent, from what it reports: ``usage.json``, or its CLI's JSON output.

Read in this order (the first that reports wins):

1. ``usage.json`` written into the work folder::

       {"prompt_tokens": 1234, "completion_tokens": 567, "cost_usd": 0.0421}

   ``cost_usd`` is optional; the token counts are non-negative integers. A malformed file is
   reported and the tokens are then unknown (never guessed).
2. the program's stdout, in its CLI's JSON-lines format (``output_format``; ``auto`` tries
   Codex's, then OpenCode's, each known by its event types, then Claude Code's):

   - ``claude-stream-json``: Claude Code's ``-p --output-format stream-json --verbose``. A final
     ``{"type": "result", "usage": {...}, "total_cost_usd": x}`` line is the total; without
     one, the ``usage`` of every assistant message is summed, once per message id (a message
     split over several lines repeats its usage).
   - ``codex-json``: Codex CLI's ``codex exec --json``: each ``{"type": "turn.completed",
     "usage": {"input_tokens", "cached_input_tokens", "output_tokens"}}`` is one turn's usage,
     summed over turns. Codex reports no cost. ``input_tokens`` already holds the cached ones.
   - ``opencode-json``: OpenCode's ``opencode run --format json``: each ``{"type":
     "step_finish", "part": {"tokens": {"input", "output", "reasoning", "cache": {"read",
     "write"}}, "cost": x}}`` is one step's, summed over steps.

   Prompt tokens count every input token (cache reads and writes included); completion tokens
   every output token (reasoning included).
3. neither: unknown (NULL in the store), never guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

USAGE_FILE = "usage.json"
OUTPUT_FORMATS = ("auto", "claude-stream-json", "codex-json", "opencode-json", "none")


@dataclass
class Usage:
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    source: str  # "usage.json", one of OUTPUT_FORMATS' names, or "unknown"
    problem: str | None = None

    @property
    def total_tokens(self) -> int | None:
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


UNKNOWN = Usage(None, None, None, "unknown")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _money(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def json_lines(stdout: str) -> Iterator[dict[str, Any]]:
    """The JSON objects among a program's output lines; other lines are passed over."""
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def _usage_file(path: Path) -> Usage:
    try:
        data = json.loads(path.read_text())
        prompt, completion = data["prompt_tokens"], data["completion_tokens"]
        cost = data.get("cost_usd")
        for value in (prompt, completion):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError("token counts must be non-negative integers")
        if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float))):
            raise ValueError("cost_usd must be a number")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        return Usage(None, None, None, "unknown",
                     problem=f"{USAGE_FILE} ignored ({type(error).__name__}: {error})")
    return Usage(prompt, completion, None if cost is None else float(cost), USAGE_FILE)


def _claude_tokens(usage: Mapping[str, Any]) -> tuple[int, int]:
    prompt = sum(_count(usage.get(key)) for key in
                 ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return prompt, _count(usage.get("output_tokens"))


def claude_stream_json(stdout: str) -> Usage | None:
    result: tuple[Mapping[str, Any], Any] | None = None
    per_message: dict[str, Mapping[str, Any]] = {}
    unnamed: list[Mapping[str, Any]] = []
    for record in json_lines(stdout):
        message = record.get("message") if isinstance(record.get("message"), dict) else {}
        usage = record.get("usage", message.get("usage"))
        if not isinstance(usage, dict):
            continue
        if record.get("type") == "result":
            result = (usage, record.get("total_cost_usd"))
        elif isinstance(message.get("id"), str):
            per_message[message["id"]] = usage
        else:
            unnamed.append(usage)
    if result is not None:
        prompt, completion = _claude_tokens(result[0])
        return Usage(prompt, completion, _money(result[1]), "claude-stream-json")
    records = [*per_message.values(), *unnamed]
    if not records:
        return None
    counts = [_claude_tokens(usage) for usage in records]
    return Usage(sum(p for p, _ in counts), sum(c for _, c in counts), None,
                 "claude-stream-json")


def codex_json(stdout: str) -> Usage | None:
    turns = [record["usage"] for record in json_lines(stdout)
             if record.get("type") == "turn.completed" and isinstance(record.get("usage"), dict)]
    if not turns:
        return None
    return Usage(sum(_count(u.get("input_tokens")) for u in turns),
                 sum(_count(u.get("output_tokens")) for u in turns), None, "codex-json")


def opencode_json(stdout: str) -> Usage | None:
    steps = [record["part"] for record in json_lines(stdout)
             if record.get("type") == "step_finish" and isinstance(record.get("part"), dict)
             and isinstance(record["part"].get("tokens"), dict)]
    if not steps:
        return None
    prompt = completion = 0
    costs = []
    for part in steps:
        tokens = part["tokens"]
        cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
        prompt += _count(tokens.get("input")) + _count(cache.get("read")) + _count(
            cache.get("write"))
        completion += _count(tokens.get("output")) + _count(tokens.get("reasoning"))
        costs.append(_money(part.get("cost")))
    cost = sum(c for c in costs if c is not None) if any(c is not None for c in costs) else None
    return Usage(prompt, completion, cost, "opencode-json")


# In the order ``auto`` tries them: the formats known by their own event types first, then
# Claude Code's, which takes any line with a usage object.
PARSERS: dict[str, Callable[[str], Usage | None]] = {
    "codex-json": codex_json,
    "opencode-json": opencode_json,
    "claude-stream-json": claude_stream_json,
}


def parse_output(stdout: str, output_format: str = "auto") -> Usage | None:
    """The usage a CLI's stdout reports in ``output_format`` (``auto``: the first format that
    finds any), or None."""
    if output_format == "none":
        return None
    names = list(PARSERS) if output_format == "auto" else [output_format]
    for name in names:
        found = PARSERS[name](stdout)
        if found is not None:
            return found
    return None


def read_usage(folder: Path, stdout: str, output_format: str = "auto") -> Usage:
    path = folder / USAGE_FILE
    if path.is_file():
        return _usage_file(path)
    return parse_output(stdout, output_format) or UNKNOWN
