"""Write the example report under docs/example-report/ from a real CPU sweep.

What it runs, each as a user would (``kgb`` in a subprocess, one SQLite store):

1. ``kgb run --method reference --backend cpu`` over a mixed handful of ATen, vLLM and cuBLAS
   operators (Triton's interpreter, timed: those timings are the interpreter's, and the
   report says so);
2. the same reference kernels of the mc110 operators with ``--emulate ascend``, so the MC view
   has two backends (one of them emulation, labelled as such) and a deny-listed operator;
3. one scripted LLM run: the ``llm`` method against the loopback chat server of
   ``tests/chat_server.py``, whose scripted answers are real kernels (right, wrong, broken and
   none), with token counts and prices, so the cost view has numbers;
4. ``kgb calibrate --backend cpu`` (torch's CPU rates; the interpreter rows stay n/a);
5. ``kgb report --html --md --csv``.

``python scripts/write_example_report.py [--out docs/example-report] [--db PATH]``.
The test suite calls ``build_store`` with fewer operators (tests/test_reports.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"

REFERENCE_OPS = ("aten.relu", "aten.add", "aten.softmax", "aten.mm", "aten.sort",
                 "aten.cumsum", "vllm.silu_and_mul", "vllm.rms_norm",
                 "cublas.cublasSaxpy_v2", "cublas.cublasSgemm_v2")
EMULATED_OPS = ("aten.relu", "aten.add", "aten.softmax", "aten.mm", "aten.sort")
EMULATED_BACKEND = "ascend"  # its deny-list names aten.sort
LLM_KEY_VARIABLE = "KGB_EXAMPLE_LLM_KEY"


def kgb(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "kgb_core", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=str(REPO),
                          timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"kgb {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
                           f"\n{done.stdout}")
    return done


def _answer(code: str) -> str:
    return f"Here is the kernel.\n\n```python\n{code}```\n"


def llm_script(registry) -> list[tuple[str, list[tuple[str, tuple[int, int]]]]]:
    """Per operator, the two scripted answers (text, (prompt tokens, completion tokens))."""
    def reference(op_id: str) -> str:
        return _answer(registry.operator(op_id).reference_kernel())

    kernels = TESTS / "kernels"
    return [
        ("aten.relu", [(_answer((kernels / "relu_syntax_error.py").read_text()), (900, 400)),
                       (reference("aten.relu"), (900, 350))]),
        ("aten.add", [(_answer((kernels / "add_wrong_values.py").read_text()), (1000, 500)),
                      (_answer((kernels / "add_wrong_values.py").read_text()), (1000, 480))]),
        ("aten.neg", [("I can not write this kernel.", (800, 20)),
                      (_answer((kernels / "relu_syntax_error.py").read_text()), (800, 300))]),
        ("vllm.silu_and_mul", [(reference("vllm.silu_and_mul"), (1200, 600)),
                               (reference("vllm.silu_and_mul"), (1200, 610))]),
        ("cublas.cublasSaxpy_v2", [(reference("cublas.cublasSaxpy_v2"), (1100, 450)),
                                   (reference("cublas.cublasSaxpy_v2"), (1100, 460))]),
    ]


def run_scripted_llm(db: Path, registry, script=None) -> list[dict]:
    """The llm method against a loopback server answering from ``script``; returns the
    requests the server got."""
    sys.path.insert(0, str(TESTS))
    from chat_server import ChatServer, Reply  # noqa: E402 - the suite's loopback server

    script = script if script is not None else llm_script(registry)
    replies = [Reply(text, usage=usage) for _, answers in script for text, usage in answers]
    with tempfile.TemporaryDirectory() as scratch, ChatServer(replies) as server:
        config = Path(scratch) / "llm.toml"
        config.write_text(
            f'[run]\nbackend = "cpu"\n'
            f'[method]\nname = "llm"\nbase_url = "{server.base_url}"\nmodel = "scripted-model"\n'
            f'api_key_env = "{LLM_KEY_VARIABLE}"\nmax_retries = 0\nsamples = 2\n'
            f'price_input_per_mtok = 3.0\nprice_output_per_mtok = 15.0\n'
            f'[evaluation]\nseeds = [0]\n')
        args = ["run", "--config", str(config), "--db", str(db)]
        for op_id, _ in script:
            args += ["--op", op_id]
        kgb(*args, env={LLM_KEY_VARIABLE: "sk-loopback-not-a-key"})
        return list(server.requests)


def build_store(db: Path, reference_ops=REFERENCE_OPS, emulated_ops=EMULATED_OPS,
                llm=True, calibrate=True, matmul_n: int = 256) -> Path:
    from kgb_core.plugins import load_registry

    def reference_run(ops, *extra: str) -> None:
        args = ["run", "--method", "reference", "--backend", "cpu", "--seed", "0", "--db",
                str(db), *extra]
        for op_id in ops:
            args += ["--op", op_id]
        kgb(*args)

    reference_run(reference_ops)
    if emulated_ops:
        reference_run(emulated_ops, "--emulate", EMULATED_BACKEND)
    if llm:
        run_scripted_llm(db, load_registry())
    if calibrate:
        kgb("calibrate", "--backend", "cpu", "--db", str(db), "--matmul-n", str(matmul_n))
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "example-report")
    parser.add_argument("--db", type=Path, default=None,
                        help="keep the store here (default: a temporary file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db = args.db or Path(scratch) / "example.db"
        if db.exists():
            raise SystemExit(f"{db} exists; the example starts from an empty store")
        build_store(db)
        args.out.mkdir(parents=True, exist_ok=True)
        kgb("report", "--db", str(db), "--html", str(args.out / "report.html"),
            "--md", str(args.out / "report.md"))
        print(kgb("report", "--db", str(db)).stdout)
    print(f"wrote {args.out / 'report.html'} and {args.out / 'report.md'}")


if __name__ == "__main__":
    main()
