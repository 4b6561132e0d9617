"""The ``files`` method: score kernels that were generated elsewhere.

A lab that ran its own model hands kgb either a directory laid out as ``<op_id>.py`` (sample 0)
and ``<op_id>.sample<k>.py`` (sample k) (or BackendBench's ``<op>/<op>_implementation_v<k>.py``,
for ``aten.<op>``: docs/backendbench.md), or a JSONL file with one generation per line:
``{"op": "aten.softmax", "sample": 0, "code": "..."}`` (or ``"answer"``: a model's raw answer,
whose code is extracted), with optional ``prompt_tokens``, ``completion_tokens`` and
``cost_usd`` that the store keeps. An operator with no file gets the verdict ``no_candidate``.

``samples`` (``--samples``) selects samples 0 to samples-1 of each operator (pass@k with that
k); without it every sample held counts. An operator holding fewer than asked is said so.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from kgb_core import hookimpl
from kgb_core.backends import Quirks
from kgb_core.candidates import Candidate, extract_code
from kgb_core.errors import UserError
from kgb_core.methods import GenerationContext, Method, MethodOption
from kgb_core.operators import OperatorSpec

_SAMPLE_FILE = re.compile(r"^(?P<op>.+?)(?:\.sample(?P<sample>\d+))?\.py$")


def _from_directory(folder: Path) -> dict[str, list[Candidate]]:
    found: dict[str, list[Candidate]] = {}
    for path in sorted(folder.glob("*.py")):
        match = _SAMPLE_FILE.match(path.name)
        if match is None:
            continue
        sample = int(match.group("sample") or 0)
        found.setdefault(match.group("op"), []).append(
            Candidate(source=path.read_text(errors="replace"), sample=sample, origin=str(path)))
    for op_id, candidates in _from_backendbench(folder).items():
        found.setdefault(op_id, []).extend(candidates)
    return found


def _from_backendbench(folder: Path) -> dict[str, list[Candidate]]:
    """BackendBench's directory layout (its ``generated_kernels/``): ``<op>/<op>_implementation_v<k>.py``
    defining ``<op>_kernel_impl(*args, **kwargs)``, for ATen's ``<op>``. Each becomes a
    candidate for kgb's ``aten.<op>`` (sample k-1) with ``kernel(*args)`` calling it: kgb calls
    it with its own signature's positional arguments, which docs/backendbench.md maps onto
    ATen's overloads."""
    found: dict[str, list[Candidate]] = {}
    for path in sorted(folder.glob("*/*_implementation_v*.py")):
        op = path.parent.name
        match = re.fullmatch(rf"{re.escape(op)}_implementation_v(\d+)\.py", path.name)
        if match is None or int(match.group(1)) < 1:
            continue
        source = path.read_text(errors="replace")
        source += (f"\n\n# kgb: BackendBench's entry point, called with kgb's positional "
                   f"arguments (docs/backendbench.md)\ndef kernel(*args):\n"
                   f"    return {op}_kernel_impl(*args)\n")
        found.setdefault(f"aten.{op}", []).append(
            Candidate(source=source, sample=int(match.group(1)) - 1, origin=str(path)))
    return found


def _from_jsonl(path: Path) -> dict[str, list[Candidate]]:
    found: dict[str, list[Candidate]] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            op_id = record["op"]
            code = record["code"] if "code" in record else extract_code(record["answer"])
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise UserError(f"{path}:{number}: each line must be a JSON object with \"op\" and "
                            f"\"code\" or \"answer\" ({type(error).__name__}: {error})") from None
        found.setdefault(op_id, []).append(Candidate(
            source=code, sample=int(record.get("sample", len(found.get(op_id, [])))),
            prompt_tokens=record.get("prompt_tokens"),
            completion_tokens=record.get("completion_tokens"),
            cost_usd=record.get("cost_usd"), origin=f"{path}:{number}"))
    return found


@lru_cache(maxsize=8)
def load_submissions(location: str) -> dict[str, list[Candidate]]:
    path = Path(location)
    if path.is_dir():
        return _from_directory(path)
    if path.is_file() and path.suffix == ".jsonl":
        return _from_jsonl(path)
    raise UserError(f"method files: path {location!r} must be a directory of <op_id>.py files "
                    f"or a .jsonl file")


class FilesMethod(Method):
    name = "files"
    description = "kernels generated elsewhere: a directory of <op_id>.py files or a JSONL file"

    options = (
        MethodOption("path", None, "a directory of <op_id>.py files (BackendBench's layout "
                     "too) or a .jsonl file of generations (required)", (str,)),
        MethodOption("samples", None, "samples per operator to take (default: every one the "
                     "path holds)", (int,)),
    )

    def _submissions(self, options: Mapping[str, Any]) -> dict[str, list[Candidate]]:
        if "path" not in options:
            raise UserError("method files needs its path: [method] path = \"submissions/\" in "
                            "the run config")
        return load_submissions(str(Path(options["path"]).resolve()))

    def samples(self, options: Mapping[str, Any]) -> int:
        asked = _asked_samples(options)
        if asked is not None:
            return asked
        return max((len(c) for c in self._submissions(options).values()), default=1)

    def generate(self, op: OperatorSpec, quirks: Quirks, ctx: GenerationContext) -> list[Candidate]:
        held = sorted(self._submissions(ctx.options).get(op.id, []), key=lambda c: c.sample)
        asked = _asked_samples(ctx.options)
        if asked is None:
            return held
        chosen = [c for c in held if c.sample < asked]
        if held and len(chosen) < asked:
            ctx.log(f"method files: {Path(str(ctx.options['path'])).name} holds "
                    f"{len(chosen)} of samples 0-{asked - 1} of {op.id} ({len(held)} in all); "
                    f"pass@{asked} counts those")
        return chosen


def _asked_samples(options: Mapping[str, Any]) -> int | None:
    """``samples`` when given: a whole number of at least 1."""
    if options.get("samples") is None:
        return None
    asked = options["samples"]
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise UserError(f"method files: samples must be a whole number of at least 1, "
                        f"got {asked!r}")
    return asked


@hookimpl
def kgb_register_methods(register):
    register(FilesMethod())
