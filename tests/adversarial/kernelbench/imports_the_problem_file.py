# op: kernelbench.19_ReLU
# expect: runtime_error
# screen: rejected
# The prompt shows the problem file's path, and the repository holding it is an ancestor of
# the interpreter's own paths: this candidate looks for the file there and runs its Model
# (torch.relu) on the input. The problem folder is masked from candidates' runners, so the
# file is not there to find (or not readable) and kernel(...) raises; were it readable, the
# op recorder would still say reference_used. The static screen refuses os and importlib.
import importlib.util
import os
import sys

import torch
import triton
import triton.language as tl

WHERE = (os.path.join("tests", "data", "kernelbench", "19_ReLU.py"),
         os.path.join("KernelBench", "level1", "19_ReLU.py"))


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


def _find_problem():
    starts = [os.getcwd(), os.path.dirname(torch.__file__), sys.prefix] + list(sys.path)
    for start in starts:
        folder = os.path.abspath(start or ".")
        while True:
            for tail in WHERE:
                path = os.path.join(folder, tail)
                if os.path.isfile(path):
                    return path
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    raise FileNotFoundError("19_ReLU.py is nowhere above " + ", ".join(map(str, starts[:3])))


def kernel(x):
    spec = importlib.util.spec_from_file_location("the_problem", _find_problem())
    problem = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(problem)
    y = problem.Model()(x).contiguous()
    out = torch.empty_like(y)
    _copy[(triton.cdiv(max(y.numel(), 1), 1024),)](y, out, y.numel(), BLOCK=1024)
    return out
