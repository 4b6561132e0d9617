"""Prompt templates for model-driven methods, filled from the operator and the chip's quirks.

Templates are files (``*.md`` beside this module) with ``$name`` fields, so a lab can change
the wording without touching code. Held-out cases never reach a prompt: only
``OperatorSpec.describe()``, which leaves them out, feeds it.
"""

from __future__ import annotations

import inspect
import json
import re
import string
import textwrap
from pathlib import Path

from kgb_core.backends import Quirks
from kgb_core.operators import OperatorSpec

TEMPLATES = Path(__file__).parent
MAX_CASES_SHOWN = 6


def template(name: str = "triton_kernel") -> string.Template:
    return string.Template((TEMPLATES / f"{name}.md").read_text())


def reference_source(spec: OperatorSpec) -> str | None:
    """The reference's own code, when reading it tells something: a function made by a factory
    (a closure over the torch function's name) would only show the factory, so then None."""
    if getattr(spec.reference, "__closure__", None):
        return None
    try:
        return textwrap.dedent(inspect.getsource(spec.reference)).strip()
    except (OSError, TypeError):
        return None


def _hints(backend_name: str, quirks: Quirks) -> str:
    lines = [f"- {hint}" for hint in quirks.prompt_hints]
    if quirks.skipped_dtypes:
        lines.append(f"- Not checked on this chip: {', '.join(sorted(quirks.skipped_dtypes))}.")
    if quirks.max_block_size:
        lines.append(f"- At most {quirks.max_block_size} elements per block.")
    if quirks.max_num_warps:
        lines.append(f"- At most num_warps={quirks.max_num_warps}.")
    if quirks.unsupported_tl:
        lines.append(f"- Unsupported here: {', '.join(quirks.unsupported_tl)}.")
    return "\n".join(lines) or f"- Standard Triton on {backend_name}."


def _reference_block(spec: OperatorSpec) -> str:
    source = reference_source(spec)
    if source is None:
        return "The PyTorch reference it must match is the one named in the description."
    return f"The PyTorch reference it must match:\n\n```python\n{source}\n```"


def render_prompt(spec: OperatorSpec, backend_name: str, quirks: Quirks,
                  template_name: str = "triton_kernel") -> str:
    info = spec.describe()
    cases = [f"- {case['name']} ({case['tier']}): {json.dumps(case['params'])}"
             for case in info["cases"][:MAX_CASES_SHOWN]]
    arguments = re.sub(r"^kernel\((.*)\)\s*(->.*)?$", r"\1", spec.signature).strip()
    return template(template_name).substitute(
        op_id=spec.id, description=spec.description, signature=spec.signature,
        dtypes=", ".join(spec.dtypes), cases="\n".join(cases),
        reference_block=_reference_block(spec), backend=backend_name,
        hints=_hints(backend_name, quirks), arguments=arguments,
    )
