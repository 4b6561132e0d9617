"""A judge starts its runner template before it imports torch, so the two processes import
torch side by side (``Judge.__init__``): 1.5 s of every judge's start on a 2-core machine,
which a module-level ``import torch`` anywhere on the way to the template takes back."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import CPU_BACKEND_PRELUDE

SCRIPT = """
import json, os, sys
from kgb_core.evaluation import runners

seen = []
start = runners.RunnerTemplate.__init__


def spy(self, *args, **kwargs):
    seen.append("torch" in sys.modules)
    return start(self, *args, **kwargs)


runners.RunnerTemplate.__init__ = spy
""" + CPU_BACKEND_PRELUDE + """
judge = Judge(backend, registry)
ready = "torch" in sys.modules and judge.template is not None
judge.close()
print(json.dumps({"torch_when_the_template_started": seen, "ready": ready}))
"""


def test_the_template_starts_before_the_judge_imports_torch():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"torch_when_the_template_started": [False], "ready": True}, found
