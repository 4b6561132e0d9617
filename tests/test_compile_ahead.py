"""Compiling a candidate's Triton kernels ahead, with no device (``compile_ahead.py``): real
Triton compiles for an H100's target (sm_90) on this GPU-less machine, each in a process of its
own, as the judge would run it, with a Triton cache of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kgb_core.plugins import load_registry

# The child: the module at argv[1] compiled ahead on argv[2]'s input sets (an operator's shown
# cases in every dtype, or "vector" for a float32 vector of 4097 values).
CHILD = textwrap.dedent("""
    import importlib.util, json, sys
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver
    from triton.runtime.jit import JITFunction
    from kgb_core.evaluation.compile_ahead import compile_calls
    from kgb_core.operators import InputContext

    spec_of = importlib.util.spec_from_file_location("candidate", sys.argv[1])
    module = importlib.util.module_from_spec(spec_of)
    spec_of.loader.exec_module(module)
    if sys.argv[2] == "vector":
        sets = [[torch.empty(4097, device="meta")]]
    else:
        from kgb_core.plugins import load_registry
        spec = load_registry().operator(sys.argv[2])
        sets = [spec.make_inputs(InputContext(case, dtype, 0, "meta"))
                for case in spec.shown_cases() for dtype in spec.dtypes]
    run, active = JITFunction.run, driver._active
    report = compile_calls(module.kernel, sets, GPUTarget("cuda", 90, 32))
    print(json.dumps({"calls": report.calls, "compiled": report.compiled,
                      "compile_s": report.compile_s, "stopped": report.stopped,
                      "restored": JITFunction.run is run and driver._active is active,
                      "seen": getattr(module, "SEEN", None)}))
""")


def _compile_ahead(module: Path, inputs: str, cache: Path) -> dict:
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache), "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-c", CHILD, str(module), inputs], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cubins(cache: Path) -> set[str]:
    return {path.parent.name for path in cache.rglob("*.cubin")}


def _written(cache: Path) -> dict[str, int]:
    """Each cache file and when it was last written: Triton writes a kernel's files when it
    compiles it, and leaves them alone when it loads them."""
    return {str(path.relative_to(cache)): path.stat().st_mtime_ns
            for path in cache.rglob("*") if path.is_file()}


@pytest.fixture(scope="module")
def relu(tmp_path_factory):
    """aten.relu's reference kernel compiled ahead over its shown cases, twice in two processes
    on one cache."""
    folder = tmp_path_factory.mktemp("compile-ahead")
    module = folder / "relu.py"
    module.write_text(load_registry().operator("aten.relu").reference_kernel())
    cache = folder / "cache"
    first = _compile_ahead(module, "aten.relu", cache)
    kernels, written = _cubins(cache), _written(cache)
    again = _compile_ahead(module, "aten.relu", cache)
    return {"first": first, "kernels": kernels, "written": written, "again": again,
            "rewritten": _written(cache)}


def test_a_reference_kernel_compiles_for_the_gpu_without_one(relu):
    first = relu["first"]
    assert first["stopped"] == [] and first["restored"], first
    # Six shown cases in three dtypes: each dtype a specialization at least, and no more
    # kernels than calls.
    assert 3 <= first["compiled"] <= first["calls"] == 18, first
    assert len(relu["kernels"]) >= 3, relu["kernels"]


def test_another_process_finds_every_kernel_in_the_cache(relu):
    """The cache's keys do not depend on the process: a second one asks for the same kernels
    and loads every one of them as the first wrote it, writing nothing."""
    assert relu["again"]["compiled"] == relu["first"]["compiled"], relu
    assert relu["rewritten"] == relu["written"], "the second process compiled again"


def test_code_that_needs_values_stops_there_and_what_it_launched_before_is_compiled(tmp_path):
    module = tmp_path / "reads_a_value.py"
    module.write_text(textwrap.dedent("""
        import torch, triton, triton.language as tl

        @triton.jit
        def _double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offsets < n
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)

        def kernel(x):
            out = torch.empty_like(x)
            _double[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
            if out.sum().item() > 0:  # a value: none on a meta tensor
                return out
            return -out
    """))
    report = _compile_ahead(module, "vector", tmp_path / "cache")
    assert report["compiled"] == 1 and report["restored"], report
    assert len(report["stopped"]) == 1 and "call 1:" in report["stopped"][0], report


def test_an_autotuned_kernel_compiles_every_config_and_benchmarks_none(tmp_path):
    module = tmp_path / "autotuned.py"
    module.write_text(textwrap.dedent("""
        import torch, triton, triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=2),
                                  triton.Config({"BLOCK": 1024}, num_warps=4)], key=["n"])
        @triton.jit
        def _negate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offsets < n
            tl.store(out_ptr + offsets, -tl.load(x_ptr + offsets, mask=mask), mask=mask)

        def kernel(x):
            out = torch.empty_like(x)
            _negate[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
            return out
    """))
    report = _compile_ahead(module, "vector", tmp_path / "cache")
    assert report["stopped"] == [] and report["restored"], report
    assert report["compiled"] == 2, report
    assert len(_cubins(tmp_path / "cache")) == 2


def test_host_code_that_asks_the_device_takes_its_gpu_branch(tmp_path):
    """vLLM's style, ``4096 if x.is_cuda else 1024``: compiled ahead for a plain meta tensor's
    answer, the kernel the GPU launches was not in the cache (two references on the H100).
    Every way a candidate asks for or allocates on the device says the GPU, and no memory is
    touched."""
    module = tmp_path / "asks_the_device.py"
    module.write_text(textwrap.dedent("""
        import torch, triton, triton.language as tl

        SEEN = []

        @triton.jit
        def _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offsets < n
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)

        def kernel(x):
            block = 2048 if x.is_cuda else 128
            made = [torch.empty(x.numel(), device=x.device, dtype=x.dtype),
                    torch.zeros(3, device="cuda"), torch.empty_like(x), x.new_empty(5),
                    x.contiguous(), x.to(x.device), x.cuda(), x.reshape(-1)[1:]]
            SEEN.append([x.is_cuda, str(x.device), x.is_meta, block]
                        + [(str(t.device), t.is_cuda) for t in made])
            out = made[0]
            _copy[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
            return out
    """))
    report = _compile_ahead(module, "vector", tmp_path / "cache")
    assert report["stopped"] == [] and report["restored"], report
    assert report["compiled"] == 1, report
    ((is_cuda, device, is_meta, block, *made),) = report["seen"]
    assert (is_cuda, device, is_meta, block) == (True, "cuda:0", False, 2048)
    assert made == [["cuda:0", True]] * 8


def test_a_meta_copy_keeps_what_triton_specializes_on():
    """Shape, strides, dtype, and the storage offset: Triton specializes a pointer on its
    address modulo 16, and a view one element in is not aligned where its base is."""
    import torch

    from kgb_core.evaluation.compile_ahead import meta_like

    base = torch.zeros(8, 33, dtype=torch.float16)
    view = base[:, 1:].t()
    copied = meta_like([view, {"n": 7}])
    meta = copied[0]
    assert meta.device.type == "meta" and copied[1] == {"n": 7}
    assert (meta.shape, meta.stride(), meta.dtype) == (view.shape, view.stride(), view.dtype)
    assert meta.storage_offset() == view.storage_offset() == 1
    assert meta.data_ptr() % 16 == (view.data_ptr() - base.data_ptr()) % 16 == 2
