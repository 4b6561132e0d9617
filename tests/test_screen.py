"""The static screen refuses what it should and lets every shipped reference kernel through."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.screen import screen_source
from kgb_core.plugins import load_registry

HEAD = "import torch\nimport triton\nimport triton.language as tl\n"


@pytest.mark.parametrize("spec", load_registry().operators(), ids=lambda s: s.id)
def test_reference_kernels_pass_the_screen(spec):
    assert screen_source(spec.reference_kernel()) is None


@pytest.mark.parametrize("body,reason", [
    ("import ctypes\ndef kernel(x):\n    return x\n", "ctypes"),
    ("from kgb_core import plugins\ndef kernel(x):\n    return x\n", "the harness"),
    ("import torch.nn.functional as F\ndef kernel(x):\n    return F.relu(x)\n", "torch.nn"),
    ("def kernel(x):\n    return torch.ops.aten.relu(x)\n", "torch.ops"),
    ("import torch as t\ndef kernel(x):\n    return t._C._nn.gelu(x)\n", "torch._C"),
    ("def kernel(x):\n    return eval('x')\n", "eval"),
    ("def kernel(x):\n    return getattr(torch, name)(x)\n", "getattr()"),
    ("def kernel(x):\n    return getattr(torch, 'relu')(x)\n", "getattr()"),
    ("def kernel(x):\n    return x.__class__\n", "__class__"),
    ("torch.equal = lambda a, b: True\ndef kernel(x):\n    return x\n", "monkeypatching"),
    ("CACHE = {}\ndef kernel(x):\n    CACHE[1] = x\n    return x\n", "result cache"),
    ("SEEN = []\ndef kernel(x):\n    SEEN.append(x)\n    return x\n", "result cache"),
    ("n = 0\ndef kernel(x):\n    global n\n    return x\n", "global"),
    ("import os\ndef kernel(x):\n    return os.getenv('KEY')\n", "imports os"),
    ("from pathlib import Path\ndef kernel(x):\n    return Path('/etc').read_text()\n", "pathlib"),
    ("def kernel(x):\n    g = torch.cuda.CUDAGraph()\n    return x\n", "CUDAGraph"),
    ("def helper(x):\n    return x\n", "no top-level `kernel`"),
])
def test_screen_refuses(body, reason):
    finding = screen_source(HEAD + body)
    assert finding is not None and finding.verdict == verdicts.SCREEN_REJECTED
    assert reason in finding.message
    assert finding.line is None or f"line {finding.line}" in finding.message


def test_module_level_constants_and_configs_are_allowed():
    source = HEAD + ("BLOCKS = {'float32': 1024}\nSIZES = (1, 2)\n"
                     "def kernel(x):\n    return BLOCKS[str(x.dtype)]\n")
    assert screen_source(source) is None


# Routes past a deny-list: re-exports, reflection, modules as values. Each must be refused.
@pytest.mark.parametrize("body,reason", [
    ("from torch._library.fake_class_registry import _disable_current_modes\n"
     "def kernel(x):\n    return x\n", "imports torch._library"),
    ("from torch.utils._python_dispatch import _disable_current_modes\n"
     "def kernel(x):\n    return x\n", "imports torch.utils"),
    ("import torch.utils.data.dataloader as dl\ndef kernel(x):\n    return x\n", "torch.utils"),
    ("import typing\ndef kernel(x):\n    return typing.sys.modules\n", "module sys"),
    ("import warnings\ndef kernel(x):\n    return warnings.sys\n", "module sys"),
    ("def kernel(x):\n    return tl.core.builtins.eval('1')\n", "module builtins"),
    ("from triton.language import core\ndef kernel(x):\n    c = core\n    return x\n",
     "as a value"),
    ("def kernel(x):\n    m = torch\n    return m.ops.aten.relu(x)\n", "as a value"),
    ("import operator\ndef kernel(x):\n    return operator.attrgetter('ops')(torch)\n",
     "attrgetter"),
    ("import functools\ndef kernel(x):\n    return functools.lru_cache(None)(abs)(1)\n",
     "result cache"),
    ("def kernel(x):\n    return kernel.__wrapped__\n", "__wrapped__"),
    ("def kernel(x):\n    return type(x)\n", "type()"),
    ("def kernel(x):\n    return id(x)\n", "id()"),
    ("def kernel(x):\n    return torch.relu(x)\n", "torch.relu"),
    ("def kernel(x):\n    return triton.testing.do_bench(lambda: x)\n", "triton.testing"),
    ("def kernel(x):\n    return torch.os.getcwd()\n", "torch.os"),
    ("import numpy as np\ndef kernel(x):\n    return x\n", "on the host"),
    ("from torch import *\ndef kernel(x):\n    return x\n", "imports *"),
    ("def kernel(x):\n    return hasattr(x, name)\n", "hasattr"),
])
def test_the_allow_list_refuses(body, reason):
    finding = screen_source(HEAD + body)
    assert finding is not None and finding.verdict == verdicts.SCREEN_REJECTED, body
    assert reason in finding.message, finding.message


def test_what_published_kernels_use_is_allowed():
    source = HEAD + (
        "import math\nimport struct\nfrom typing import Optional\nimport collections\n"
        "from triton.language.extra import libdevice\n"
        "Pair = collections.namedtuple('Pair', 'a b')\n"
        "_LOG2E = tl.constexpr(1.4426950408889634)\n"
        "@triton.jit\ndef _k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(x_ptr + offs, libdevice.exp(x * _LOG2E), mask=offs < n)\n"
        "def kernel(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:\n"
        "    sms = torch.cuda.get_device_properties(0).multi_processor_count\n"
        "    props = triton.runtime.driver.active.utils.get_device_properties(0)\n"
        "    device = triton.runtime.driver.active.get_current_device()\n"
        "    scale = struct.unpack('f', struct.pack('f', 0.1))[0] * math.prod(x.shape)\n"
        "    has_extra = hasattr(tl, 'extra')\n"
        "    y = torch.empty_like(x, memory_format=torch.contiguous_format)\n"
        "    _k[(triton.cdiv(x.numel(), 128),)](y, x.numel(), BLOCK=128)\n"
        "    return y.to(torch.float32).view(-1)\n")
    assert screen_source(source) is None


def test_sources_are_parsed_one_thread_at_a_time(monkeypatch):
    """A sweep screens answers in several threads, and CPython 3.11's AST constructor fails
    now and then when two parses overlap (python/cpython#106905): no two may overlap."""
    import ast
    import threading
    import time

    real_parse, inside, overlaps = ast.parse, [0], []

    def slow_parse(source, *args, **kwargs):
        inside[0] += 1
        overlaps.append(inside[0])
        time.sleep(0.02)  # long enough for the other threads to enter, were they let in
        inside[0] -= 1
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", slow_parse)
    source = "import torch\n\ndef kernel(x):\n    return x\n"
    threads = [threading.Thread(target=screen_source, args=(source,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(overlaps) == 4 and max(overlaps) == 1
