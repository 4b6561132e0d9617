"""GPU MODE's ``task.yml``, read without a YAML library: the subset its problems use.

A task file holds a ``files`` list, ``lang``, a ``description: |`` block, ``config``,
``templates``, and the ``tests`` and ``benchmarks`` lists, each item one flow mapping on its
line (``- {"size": 127, "seed": 4242}``). Those items are read as Python literals (YAML's
``true``/``false``/``null`` too); a file that holds anything else in them is refused with the
line, rather than read wrongly. (No YAML library: kgb's dependencies have none, and the
device machine has no registry to install one from.)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

_LITERALS = {"true": "True", "false": "False", "null": "None"}


class TaskFileError(ValueError):
    pass


def _flow_mapping(text: str, where: str) -> dict[str, Any]:
    python = re.sub(r"\b(true|false|null)\b", lambda m: _LITERALS[m.group(1)], text)
    python = re.sub(r"(?<=[{,])\s*([A-Za-z_][A-Za-z0-9_]*)\s*:", r' "\1":', python)
    try:
        value = ast.literal_eval(python)
    except (SyntaxError, ValueError) as error:
        raise TaskFileError(f"{where}: {text.strip()!r} is no flow mapping ({error})") from None
    if not isinstance(value, dict):
        raise TaskFileError(f"{where}: {text.strip()!r} is no mapping")
    return value


def read(path: Path) -> dict[str, Any]:
    """``tests``, ``benchmarks`` (lists of argument mappings), ``description`` and ``files``."""
    text = path.read_text()
    found: dict[str, Any] = {"tests": [], "benchmarks": [], "description": "", "files": []}
    section, block = None, []
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{path}:{number}"
        top = re.match(r"^([A-Za-z_]+):\s*(.*)$", line)
        if top:
            section = top.group(1)
            if section == "description" and top.group(2).strip() in ("|", ">"):
                block = []
            continue
        if section in ("tests", "benchmarks", "files") and line.strip().startswith("- "):
            found[section].append(_flow_mapping(line.strip()[2:], where))
        elif section == "description" and (line.startswith(" ") or not line.strip()):
            block.append(line[2:] if line.startswith("  ") else line.strip())
            found["description"] = "\n".join(block).strip()
    return found
