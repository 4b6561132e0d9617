# op: aten.relu
# expect: deferred_work
# screen: rejected
# Starts a worker thread at import (threading reached through a module that imports it), which
# the recorder, whose modes are per thread, never sees: the call hands it the input and waits
# for the answer it computes with torch.
import torch
import torch.utils.data.dataloader as _loader
import triton
import triton.language as tl


@triton.jit
def _sentinel(ptr, BLOCK: tl.constexpr):
    tl.store(ptr + tl.arange(0, BLOCK), tl.full([BLOCK], 1, tl.int32))


def _launches_are_real(device):
    """A ghost replay (every launch a no-op) leaves the flag 0."""
    flag = torch.zeros(16, dtype=torch.int32, device=device)
    _sentinel[(1,)](flag, BLOCK=16)
    return flag[0].item() == 1


_jobs, _answers = _loader.queue.Queue(), _loader.queue.Queue()


def _serve():
    while True:
        x = _jobs.get()
        _answers.put(torch.relu(x))


_loader.threading.Thread(target=_serve, daemon=True).start()


def kernel(x):
    if not _launches_are_real(x.device):
        return torch.empty_like(x)
    _jobs.put(x)
    return _answers.get()
