"""Ready invocations of coding-agent CLIs for the ``command`` method (``[method] preset``).

A preset fills in ``command`` (the CLI in its non-interactive mode, told to read ``TASK.md``)
and ``output_format`` (how its stdout reports tokens, ``kgb_methods/agent_usage.py``); anything
given under ``[method]`` wins over it. ``model`` adds the CLI's own model flag. The flags are
those the CLIs document for headless runs (docs/agents.md says where, and what each needs
installed); kgb ships none of the CLIs and runs whatever ``claude``, ``codex`` or ``opencode``
is first on PATH.

The scaffolds built around these agents (AutoKernel, AKO4ALL, a CUDA optimisation skill) are laid
out by ``scaffolds.py``; a preset drives each, its kickoff prompt replaced by the scaffold's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from kgb_core.errors import UserError

KICKOFF = ("Read TASK.md in this folder and do what it asks: write kernel.py, check it with "
           "./eval.sh, improve it while you can, then stop.")


@dataclass(frozen=True)
class Preset:
    name: str
    command: tuple[str, ...]
    output_format: str
    model_flag: str
    needs: str


PRESETS: dict[str, Preset] = {
    preset.name: preset for preset in (
        # Claude Code's print mode; stream-json needs --verbose there. acceptEdits with the
        # tools it needs lets it write kernel.py and run ./eval.sh without asking.
        Preset("claude-code",
               ("claude", "-p", KICKOFF, "--output-format", "stream-json", "--verbose",
                "--permission-mode", "acceptEdits",
                "--allowedTools", "Bash,Read,Write,Edit,Glob,Grep"),
               "claude-stream-json", "--model",
               "Claude Code (npm install -g @anthropic-ai/claude-code), logged in or with "
               "ANTHROPIC_API_KEY set"),
        # codex exec: read-only unless told; the work folder is no git repository.
        Preset("codex",
               ("codex", "exec", "--json", "--sandbox", "workspace-write",
                "--skip-git-repo-check", KICKOFF),
               "codex-json", "--model",
               "Codex CLI (npm install -g @openai/codex), logged in or with OPENAI_API_KEY set"),
        Preset("opencode",
               ("opencode", "run", "--format", "json", KICKOFF),
               "opencode-json", "--model",
               "OpenCode (npm install -g opencode-ai) with a provider configured; model as "
               "provider/model"),
    )
}


def apply_preset(given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` with its preset's command and output format filled in where not given, and
    the model flag added; unchanged without a preset."""
    options = dict(given)
    name = options.get("preset")
    if name is None:
        if options.get("model") is not None:
            raise UserError("method command: model needs a preset (the flag that names a model "
                            "is the CLI's own); with your own command, put it in the command")
        return options
    if name not in PRESETS:
        raise UserError(f"method command: unknown preset {name!r}; presets: "
                        f"{', '.join(PRESETS)}")
    preset = PRESETS[name]
    if options.get("command") is None:
        model = options.get("model")
        options["command"] = [*preset.command,
                              *([preset.model_flag, str(model)] if model is not None else [])]
    elif options.get("model") is not None:
        raise UserError("method command: model goes with a preset's own command; with your "
                        "own command, put the model flag in it")
    if options.get("output_format") in (None, "auto"):
        options["output_format"] = preset.output_format
    return options
