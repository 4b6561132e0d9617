# op: aten.neg
# expect: tampering
# screen: rejected
# unsandboxed: tampering
# Tries to write where later candidates or the harness would read: the runners' shared work
# folder, the host's /tmp, the site-packages folder (a sitecustomize.py). Outside the work
# folder the sandbox's file system is read-only; there, the judge finds the file beside the
# runner's own folder after the runner ended, removes it, and the verdict says so.
import torch
import triton
import triton.language as tl


@triton.jit
def _fill(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.zeros((BLOCK,), dtype=out_ptr.dtype.element_ty), mask=offsets < n)


def _zeros_like(x):
    out = torch.empty_like(x)
    _fill[(triton.cdiv(x.numel(), 1024),)](out, x.numel(), BLOCK=1024)
    return out


_os = torch.os


def kernel(x):
    here = _os.getcwd()
    targets = [_os.path.join(_os.path.dirname(here), "planted.txt"), "/tmp/kgb-planted.txt",
               "/var/tmp/kgb-planted.txt",
               _os.path.join(_os.path.dirname(_os.path.dirname(torch.__file__)),
                             "sitecustomize.py")]
    for target in targets:
        fd = _os.open(target, _os.O_WRONLY | _os.O_CREAT, 0o644)
        _os.write(fd, b"import os\n")
        _os.close(fd)
    return _zeros_like(x)
