"""A real (if simple) agent program for the ``command`` method's tests.

It reads ``spec.json`` in its working directory to learn the operator, then writes
``kernel.py``: by default the right kernel, copied from ``$KGB_TEST_KERNEL_DIR/<op_id>.py``
(the test writes the shipped reference kernels there). Behaviours, from flags (for every
operator) and from ``KGB_TEST_BEHAVIOUR="aten.neg=usage+self-check,aten.add=wrong"`` (per
operator), so one sweep can cover several scenarios:

- ``usage``: write usage.json with prompt 1234, completion 567, cost 0.0421
- ``usage-no-cost``: write usage.json with prompt 2000, completion 1000 and no cost
- ``stream-json``: print Claude-Code-style stream-json lines (assistant turns, then a result)
- ``wrong``: write tests/kernels/add_wrong_values.py instead (an aten.add kernel)
- ``fail``: exit with status 3 without writing kernel.py
- ``sleep``: start a child that sleeps, record both pids in ``$KGB_TEST_PID_DIR``, sleep forever
- ``self-check``: after writing kernel.py run ./eval.sh and keep its JSON in self_check.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

WRONG_ADD = Path(__file__).resolve().parent.parent / "kernels" / "add_wrong_values.py"
BEHAVIOURS = ("usage", "usage-no-cost", "stream-json", "wrong", "fail", "sleep", "self-check")

# The totals in the result line differ from the sum of the assistant lines on purpose: the
# result line is the total and must be used alone.
STREAM = [
    {"type": "system", "subtype": "init", "session_id": "s1", "tools": ["Bash", "Write"]},
    {"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "usage": {
        "input_tokens": 10, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0,
        "output_tokens": 50}}},
    {"type": "assistant", "message": {"id": "msg_2", "role": "assistant", "usage": {
        "input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000,
        "output_tokens": 300}}},
    {"type": "user", "message": {"role": "user", "content": "tool result"}},
    {"type": "result", "subtype": "success", "is_error": False, "num_turns": 2,
     "total_cost_usd": 0.1234, "usage": {
         "input_tokens": 20, "cache_creation_input_tokens": 2100,
         "cache_read_input_tokens": 4000, "output_tokens": 400}},
]


def behaviours(op_id: str, flags: argparse.Namespace) -> set[str]:
    chosen = {name for name in BEHAVIOURS if getattr(flags, name.replace("-", "_"))}
    for item in os.environ.get("KGB_TEST_BEHAVIOUR", "").split(","):
        op, _, names = item.partition("=")
        if op.strip() == op_id:
            chosen |= {name.strip() for name in names.split("+") if name.strip()}
    unknown = chosen - set(BEHAVIOURS)
    if unknown:
        sys.exit(f"copy_reference_agent: unknown behaviours {sorted(unknown)}")
    return chosen


def sleep_forever(op_id: str) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    pid_dir = Path(os.environ["KGB_TEST_PID_DIR"])
    (pid_dir / f"{op_id}.pids").write_text(f"{os.getpid()} {child.pid}\n")
    while True:
        time.sleep(60)


def write_usage(no_cost: bool) -> None:
    usage = ({"prompt_tokens": 2000, "completion_tokens": 1000} if no_cost else
             {"prompt_tokens": 1234, "completion_tokens": 567, "cost_usd": 0.0421})
    Path("usage.json").write_text(json.dumps(usage))


def self_check() -> None:
    done = subprocess.run(["./eval.sh", "--no-timing", "--seed", "0"], capture_output=True,
                          text=True)
    Path("self_check.json").write_text(done.stdout)
    print(f"self-check: eval.sh exit status {done.returncode}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in BEHAVIOURS:
        parser.add_argument(f"--{name}", action="store_true")
    flags = parser.parse_args()
    op_id = json.loads(Path("spec.json").read_text())["id"]
    assert os.environ["KGB_OP"] == op_id and Path(os.environ["KGB_WORKDIR"]) == Path.cwd()
    chosen = behaviours(op_id, flags)
    print(f"agent: working on {op_id} with {sorted(chosen)}", file=sys.stderr)
    if "sleep" in chosen:
        sleep_forever(op_id)
    if "fail" in chosen:
        print("agent: giving up", file=sys.stderr)
        sys.exit(3)
    if "wrong" in chosen:
        source = WRONG_ADD.read_text()
    else:
        source = (Path(os.environ["KGB_TEST_KERNEL_DIR"]) / f"{op_id}.py").read_text()
    Path("kernel.py").write_text(source)
    if "usage" in chosen or "usage-no-cost" in chosen:
        write_usage(no_cost="usage" not in chosen)
    if "stream-json" in chosen:
        for line in STREAM:
            print(json.dumps(line))
    if "self-check" in chosen:
        self_check()


if __name__ == "__main__":
    main()
