"""A method's label: what a run's generation method is, in the paper's sense.

The method *plugin* (``llm``, ``files``, ``command``) is how candidates are made; the *label*
is which model, agent or submission made them: ``llm/gpt-4o``, ``files/model-b``,
``command/claude``. Two runs of one plugin with two models are two methods of the report,
each with its own rows in every view, and a result's identity in the store includes it.

A label is derived from the plugin's name and the options that change what it generates (the
first of ``model``, ``preset``, ``command``, ``path`` a run sets; ``Method.label`` may say
otherwise), or given outright with ``[method] label = "..."``. Derivation needs only the run's
plan, so a store written before labels existed gets its rows labelled from its runs' plans.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePath
from typing import Any, Mapping

MAX_LABEL_CHARS = 80
# The options that tell two runs of one plugin apart, in the order they are looked for.
LABEL_OPTIONS = ("model", "preset", "command", "path")
_UNSAFE = re.compile(r"[^\w.+\-/@:=]")


def clean_label(text: str) -> str:
    """``text`` as a label: runs of blanks and other characters outside letters, digits and
    ``. + - / @ : =`` become one ``-``, cut to ``MAX_LABEL_CHARS``."""
    cleaned = _UNSAFE.sub("-", text.strip())
    cleaned = re.sub(r"-{2,}", "-", cleaned).strip("-")
    return cleaned[:MAX_LABEL_CHARS]


def _option_text(key: str, value: Any) -> str:
    """What of an option's value names the method: a command's program (no flags), a path's
    file or folder name without its suffix, a model's or preset's name as given."""
    if key == "command":
        argv = shlex.split(value) if isinstance(value, str) else [str(v) for v in value or ()]
        return PurePath(argv[0]).name if argv else ""
    if key == "path":
        return PurePath(str(value).rstrip("/")).stem
    return str(value)


def default_label(method: str, options: Mapping[str, Any]) -> str:
    """``<plugin>/<what sets it apart>``, or the plugin's name alone when no option does."""
    for key in LABEL_OPTIONS:
        value = options.get(key)
        if value in (None, "", []):
            continue
        text = clean_label(_option_text(key, value))
        if text:
            return f"{method}/{text}"[:MAX_LABEL_CHARS]
    return method


def plan_label(plan: Mapping[str, Any]) -> str:
    """The label of a run from its stored plan: the one given, else the derived one."""
    given = plan.get("label")
    if isinstance(given, str) and given:
        return given
    return default_label(str(plan.get("method") or ""), plan.get("method_options") or {})


def file_stem(label: str) -> str:
    """A label in a file name or an HTML id: ``/`` and the like become ``_``
    (``llm/gpt-4o`` -> ``llm_gpt-4o``)."""
    return re.sub(r"[^\w.+\-=@]", "_", label)


def method_label(row: Mapping[str, Any]) -> str:
    """A stored result's method in the report's sense: its label (its plugin's name for a row
    that has none)."""
    return row.get("label") or row["method"]


def check_label(label: Any, where: str) -> str:
    """A label given in a config, checked: a non-empty string that ``clean_label`` keeps as it
    is (so that it reads the same in every table and file name)."""
    from kgb_core.errors import UserError

    if not isinstance(label, str) or not label.strip():
        raise UserError(f"{where}: [method] label must be a non-empty string")
    if clean_label(label) != label:
        raise UserError(f"{where}: [method] label {label[:100]!r} may hold letters, digits and "
                        f". + - / @ : = only, at most {MAX_LABEL_CHARS} characters (for "
                        f"example {clean_label(label) or 'my-model'!r})")
    return label
