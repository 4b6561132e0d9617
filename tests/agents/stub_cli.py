"""A stand-in for a coding-agent CLI (claude, codex, opencode), named by how it is called.

The test puts wrappers named ``claude``, ``codex`` and ``opencode`` first on PATH, each running
this file with its name. Like the real CLI it runs in the work folder, checks that it was called
in its documented headless mode (the flags a preset passes), writes ``kernel.py`` (the shipped
reference kernel, from ``$KGB_TEST_KERNEL_DIR/<op>.py``), runs ``./eval.sh --no-timing`` as many
times as ``KGB_TEST_EVAL_RUNS`` says for the operator (``aten.relu=1``), and prints its usage
the way that CLI documents it (kgb_methods/agent_usage.py):

- claude: stream-json lines, two assistant messages and a result line, the total: 4100 prompt
  and 450 completion tokens, $0.0375;
- codex: exec --json events, two turns: 3000 + 2000 input and 300 + 200 output tokens, no cost;
- opencode: run --format json events, two steps: 2000 + 2000 prompt (input and cache reads)
  and 125 + 175 completion tokens (output and reasoning), $0.002 + $0.003.

``KGB_TEST_FLOOD=<op>``: after writing kernel.py it keeps reporting more tokens every 0.1 s and
never exits, for the token cap to stop.

In a scaffold's workspace (kgb_methods/scaffolds.py, told by its KGB_TASK.md) it does what the
scaffold's instructions ask of the agent, as far as the harness can see: it writes the kernel
where that scaffold keeps it and runs the scaffold's bench step (``KGB_TEST_EVAL_RUNS`` times),
appending what the bench printed to ``stub-bench.log``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REQUIRED = {
    "claude": ("-p", "--output-format", "stream-json", "--verbose"),
    "codex": ("exec", "--json", "--skip-git-repo-check"),
    "opencode": ("run", "--format", "json"),
}


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def claude(step: int) -> list[dict]:
    usage = {"input_tokens": 100, "cache_creation_input_tokens": 1000,
             "cache_read_input_tokens": 1000, "output_tokens": 200}
    return [{"type": "assistant", "message": {"id": f"msg_{step}", "role": "assistant",
                                              "usage": usage}}]


def codex(step: int) -> list[dict]:
    return [{"type": "turn.started"},
            {"type": "item.completed", "item": {"id": f"item_{step}", "type": "agent_message",
                                                "text": "wrote kernel.py"}},
            {"type": "turn.completed", "usage": {"input_tokens": 3000 - 1000 * step,
                                                 "cached_input_tokens": 1000,
                                                 "output_tokens": 300 - 100 * step}}]


def opencode(step: int) -> list[dict]:
    return [{"type": "step_start", "sessionID": "ses_1", "part": {"type": "step-start"}},
            {"type": "text", "sessionID": "ses_1", "part": {"type": "text", "text": "done"}},
            {"type": "step_finish", "sessionID": "ses_1", "part": {
                "type": "step-finish", "reason": "stop" if step else "tool-calls",
                "cost": 0.002 + 0.001 * step,
                "tokens": {"input": 1500, "output": 100 + 50 * step, "reasoning": 25,
                           "cache": {"read": 500, "write": 0}}}}]


def main() -> int:
    name = os.environ["KGB_STUB_NAME"]
    missing = [flag for flag in REQUIRED[name] if flag not in sys.argv[1:]]
    if missing:
        print(f"{name}: not called in its headless mode, missing {missing}", file=sys.stderr)
        return 2
    if not any("TASK.md" in arg or "SKILL.md" in arg for arg in sys.argv[1:]):
        print(f"{name}: no prompt naming TASK.md or a skill", file=sys.stderr)
        return 2
    op = json.loads(Path("spec.json").read_text())["id"]
    kernel, bench = "kernel.py", ["./eval.sh", "--no-timing"]
    if Path("KGB_TASK.md").is_file():  # a scaffold's workspace: its kernel path, its bench
        for path, command in (("bench.py", ["bench.py"]),
                              ("bench/kgb/bench.py", ["bench/kgb/bench.py", "solution/kernel.py"]),
                              ("kgb_bench.py", ["kgb_bench.py", "kernel.py"])):
            if Path(path).is_file() and "harness's evaluator" in Path(path).read_text():
                bench = [sys.executable, *command, "--no-timing"]
                kernel = "solution/kernel.py" if path.startswith("bench/") else "kernel.py"
                break
        else:
            print(f"{name}: a scaffold workspace without kgb's bench step", file=sys.stderr)
            return 2
    Path(kernel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(os.environ["KGB_TEST_KERNEL_DIR"]) / f"{op}.py", kernel)
    runs = dict(item.split("=") for item in os.environ.get("KGB_TEST_EVAL_RUNS", "").split(",")
                if "=" in item)
    for _ in range(int(runs.get(op, 0))):
        done = subprocess.run(bench, capture_output=True, text=True, check=False)
        with open("stub-bench.log", "a") as log:
            log.write(f"exit {done.returncode}\n{done.stdout}{done.stderr}\n")
    events = {"claude": claude, "codex": codex, "opencode": opencode}[name]
    if os.environ.get("KGB_TEST_FLOOD") == op:
        step = 0
        while True:  # the token cap must stop it
            for record in events(step % 2):
                if name == "claude":
                    record["message"]["id"] = f"msg_flood_{step}"
                emit(record)
            step += 1
            time.sleep(0.1)
    for step in (0, 1):
        for record in events(step):
            emit(record)
    if name == "claude":
        emit({"type": "result", "subtype": "success", "is_error": False,
              "total_cost_usd": 0.0375, "usage": {
                  "input_tokens": 200, "cache_creation_input_tokens": 1900,
                  "cache_read_input_tokens": 2000, "output_tokens": 450}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
