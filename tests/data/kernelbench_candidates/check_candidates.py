"""Checks the known-good candidates against their KernelBench-format problems in Triton's
interpreter, at small sizes: each problem's module-level integers above 16 are divided (kept
at 8 or more, odd ones kept odd), under two divisors so that more than one set of sizes is
seen. Both forms are checked: kernel(*inputs, *state tensors, *init args) and ModelNew.

    .venv/bin/python tests/data/kernelbench_candidates/check_candidates.py [stem ...]

On a GPU, ``--device cuda`` compiles the kernels instead of interpreting them, and ``--full``
keeps the problems' own sizes.
"""
from __future__ import annotations

import copy
import importlib.util
import os
import sys
import time
from pathlib import Path

DEVICE = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
FULL = "--full" in sys.argv
os.environ.setdefault("TRITON_INTERPRET", "1" if DEVICE == "cpu" else "0")

import torch  # noqa: E402

HERE = Path(__file__).resolve().parent
PROBLEMS = HERE.parent / "kernelbench"
# Looser for the problems that accumulate long dot products (matmul, linear, conv).
LOOSE = ("Matmul", "Linear", "Gemm", "Conv")
DIVISORS = (64, 37)


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scale(problem, divisor: int) -> dict:
    sizes = {}
    for name, value in vars(problem).items():
        if name.startswith("_") or type(value) is not int or value <= 16:
            continue
        small = max(8, value // divisor)
        if value % 2 and not small % 2:
            small += 1
        setattr(problem, name, small)
        sizes[name] = small
    return sizes


def tolerance(stem: str) -> dict:
    if any(word in stem for word in LOOSE):
        return {"rtol": 1e-3, "atol": 1e-3}
    return {"rtol": 1e-4, "atol": 1e-4}


def check(stem: str, divisor: int) -> str:
    problem = load(PROBLEMS / f"{stem}.py", f"problem_{divisor}_{stem}")
    sizes = {} if FULL else scale(problem, divisor)
    candidate = load(HERE / stem / "kernel.py", f"kernel_{divisor}_{stem}")
    modelnew = load(HERE / stem / "modelnew.py", f"modelnew_{divisor}_{stem}")
    tol = tolerance(stem)

    torch.manual_seed(divisor)
    init = problem.get_init_inputs()
    model = problem.Model(*init)
    inputs = problem.get_inputs()
    with torch.no_grad():  # constant parameters (a norm's ones and zeros) made distinct, so a
        for parameter in model.parameters():  # kernel that ignores them is caught
            if parameter.numel() > 1 and bool(parameter.min() == parameter.max()):
                parameter.add_(torch.randn_like(parameter) * 0.1)
    reference_model = copy.deepcopy(model)
    expected = reference_model(*inputs)
    expected_state = reference_model.state_dict()

    state = [t.clone() for t in model.state_dict().values()]
    got = candidate.kernel(*inputs, *state, *init)
    torch.testing.assert_close(got, expected.detach(), **tol)
    for (key, want), have in zip(expected_state.items(), state):
        torch.testing.assert_close(have, want, **tol, msg=lambda m: f"state {key}: {m}")

    new = modelnew.ModelNew(*init)
    assert list(new.state_dict()) == list(model.state_dict()), "state_dict keys differ"
    new.load_state_dict(model.state_dict())
    got = new(*inputs)
    torch.testing.assert_close(got.detach(), expected.detach(), **tol)
    for key, want in expected_state.items():
        torch.testing.assert_close(new.state_dict()[key], want, **tol,
                                   msg=lambda m: f"ModelNew state {key}: {m}")
    return f"sizes {sizes}"


def main(args: list[str]) -> int:
    torch.set_default_device(DEVICE)  # where get_inputs() and Model(...) put their tensors
    torch.backends.cudnn.allow_tf32 = False  # a TF32 convolution is no fp32 reference
    torch.backends.cuda.matmul.allow_tf32 = False
    stems = [a for a in args if not a.startswith("--") and a != DEVICE]
    stems = stems or sorted(p.stem for p in PROBLEMS.glob("*.py"))
    failures = 0
    for stem in stems:
        for divisor in DIVISORS[:1] if FULL else DIVISORS:
            start = time.perf_counter()
            try:
                detail = check(stem, divisor)
                status = "ok"
            except Exception as error:  # report every problem, not just the first
                failures += 1
                status, detail = "FAIL", f"{type(error).__name__}: {error}"
            print(f"{status:4} {stem} /{divisor} ({time.perf_counter() - start:.1f}s) {detail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
