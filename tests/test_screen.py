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
    ("import torch.nn.functional as F\ndef kernel(x):\n    return F.relu(x)\n", None),
    ("def kernel(x):\n    return torch.ops.aten.relu(x)\n", "torch.ops"),
    ("import torch as t\ndef kernel(x):\n    return t._C._nn.gelu(x)\n", "torch._C"),
    ("def kernel(x):\n    return eval('x')\n", "eval"),
    ("def kernel(x):\n    return getattr(torch, name)(x)\n", "computed attribute"),
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
    if reason is None:  # F.relu is caught at run time by the op recorder, not here
        assert finding is None
        return
    assert finding is not None and finding.verdict == verdicts.SCREEN_REJECTED
    assert reason in finding.message
    assert finding.line is None or f"line {finding.line}" in finding.message


def test_module_level_constants_and_configs_are_allowed():
    source = HEAD + ("BLOCKS = {'float32': 1024}\nSIZES = (1, 2)\n"
                     "def kernel(x):\n    return BLOCKS[str(x.dtype)]\n")
    assert screen_source(source) is None
