"""aten.cumprod at fp16's overflow threshold, through the real checker and the real kernel.

On an H200 the known-good cumprod kernel failed the after-timing trial of long_sequence fp16
(its own near-one draws, seed AFTER_TIMING_SEED): at (40, 23028) the float64 truth is
-65519.93, which rounds to -65504, while the kernel's fp32 running product came out at or
past -65520 and was stored as -inf. Both roundings are right; which one a kernel gets depends
on the order of its N - 1 fp32 roundings. Here four fp16 factors pin it down: a, b, c open a
row and d opens the kernel's second chunk of 1024 columns (its MAX_TILE), the rest of the row
being 1. Every product of two fp16 values is exact in fp32 (22 significant bits), so the
chunk's carry is fp32(a b c) = 80494.875 in any order, and the kernel's prefix at d is
fp32(80494.875 d) = 65520, which fp16 stores as inf; the truth a b c d = 65519.99701 is
stored as 65504 (torch rounds float64 to fp16 through fp32, 65519.99609 here, so three
factors, rounded once by both sides, could not tell the two apart).

The check runs in the CPU backend's worker environment (Triton's interpreter), on an operator
that is aten.cumprod with these rows written over its near-one draws. A wrong inf (a kernel
that multiplies fp16 in fp16, overflowing on the way to 32768) and a wrong 65504 (a kernel
that saturates, against a truth of 80494.875) must still fail.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import CPU_JUDGE_PRELUDE, REPO

# Per row, {column: factor} written over the draws, the rest of the row set to 1.
EDGE_ROWS = [
    # 80494.875 (inf, 23 % past the threshold) at columns 2 to 1023, then the truth
    # 65519.99701: reference 65504, the kernel 65520 -> inf
    {0: 283.75, 1: 218.25, 2: 1.2998046875, 1024: 0.81396484375},
    {0: -283.75, 1: 218.25, 2: 1.2998046875, 1024: 0.81396484375},   # the same, negative
    {0: 256.0, 1: 256.0, 2: 0.5},     # 65536 (inf), then 32768, far below the threshold
]
COLUMNS = [0, 1, 2, 1023, 1024]  # those reported back, per row

EDGE_CHECK = r"""
import dataclasses, importlib.util, json, os, sys, tempfile
""" + CPU_JUDGE_PRELUDE + r"""
import torch
from kgb_core.operators import InputContext, ShapeCase
device = judge.device

rows = json.loads(sys.argv[1])
edits = json.loads(sys.argv[2])
columns = json.loads(sys.argv[3])
cumprod = registry.operator("aten.cumprod")

def edge_inputs(ctx):
    x, dim = cumprod.make_inputs(ctx)
    for index, factors in enumerate(rows):
        x[index] = 1.0
        for column, factor in factors.items():
            x[index, int(column)] = factor
    return [x, dim]

case = ShapeCase("fp16_edge_rows", {"shape": (6, 1100), "dim": 1, "near_one": True})
spec = dataclasses.replace(cumprod, name="cumprod_fp16_edge", cases=(case,),
                           dtypes=("float16",), make_inputs=edge_inputs)
report = {}
for variant, (old, new) in edits.items():
    source = cumprod.reference_kernel()
    assert old in source, f"the {variant} edit no longer applies"
    path = os.path.join(tempfile.mkdtemp(), "candidate.py")
    open(path, "w").write(source.replace(old, new))
    result = judge.evaluate_spec(spec, source.replace(old, new), seeds=[0, 1], timing=True)
    loaded = importlib.util.spec_from_file_location(f"edge_{variant}", path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    x, dim = edge_inputs(InputContext(case, "float16", 0, device))
    out = module.kernel(x, dim)
    exact = torch.cumprod(x, dim, dtype=torch.float64)
    report[variant] = {
        "verdict": result.verdict, "message": result.message,
        "timed": [t["case"] for t in result.timings],
        "kernel": out[:len(rows), columns].float().tolist(),
        "reference": exact[:len(rows), columns].to(torch.float16).float().tolist(),
        "truth": exact[:len(rows), columns].tolist()}
judge.close()
print(json.dumps(report))
"""

STORE = "tl.store(out_ptr + offsets, prefix.to(out_ptr.dtype.element_ty), mask=mask)"
EDITS = {
    "reference": [STORE, STORE],
    # Stores the largest finite value where the product overflows (a satfinite conversion).
    "saturating": [STORE, "tl.store(out_ptr + offsets, tl.clamp(prefix, -65504.0, 65504.0)"
                          ".to(out_ptr.dtype.element_ty), mask=mask)"],
    # Multiplies fp16 in fp16 inside a chunk: 256 x 256 overflows before the 0.5 comes in.
    "fp16_products": ["x = tl.load(x_ptr + offsets, mask=mask, other=1.0).to(tl.float32)",
                      "x = tl.load(x_ptr + offsets, mask=mask, other=1.0)"],
}


@pytest.fixture(scope="module")
def report():
    done = subprocess.run([sys.executable, "-c", EDGE_CHECK, json.dumps(EDGE_ROWS),
                           json.dumps(EDITS), json.dumps(COLUMNS)],
                          capture_output=True, text=True, cwd=str(REPO), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# The failing side first.

def test_a_kernel_that_saturates_is_rejected_where_the_truth_is_far_past_the_threshold(report):
    wrong = report["saturating"]
    assert wrong["kernel"][0][:3] == [283.75, 61920.0, 65504.0]  # truth 80494.875 at (0, 2)
    assert wrong["verdict"] == "wrong_output", wrong
    assert "reference is inf at (0, 2), got 65504.0" in wrong["message"]


def test_an_inf_where_the_reference_is_far_from_the_threshold_is_rejected(report):
    wrong = report["fp16_products"]
    assert wrong["kernel"][2][:3] == [256.0, float("inf"), float("inf")]
    assert wrong["reference"][2][:3] == [256.0, float("inf"), 32768.0]
    assert wrong["verdict"] == "wrong_output", wrong
    assert "NaN/Inf values where the reference is finite; first at (2, 2)" in wrong["message"]


# The passing side.

def test_the_reference_kernel_passes_with_inf_at_the_threshold_where_the_reference_is_finite(
        report):
    right = report["reference"]
    # The edge is really there: the kernel stores +-inf where the reference stores +-65504.
    edge = COLUMNS.index(1024)
    assert right["kernel"][0][edge] == float("inf") and right["reference"][0][edge] == 65504.0
    assert right["kernel"][1][edge] == float("-inf") and right["reference"][1][edge] == -65504.0
    assert 65519.99 < right["truth"][0][edge] < 65520.0
    assert right["verdict"] == "pass", right["message"]
    # Timed, and so checked once more after timing with new values, as on the H200.
    assert right["timed"] == ["fp16_edge_rows"]
