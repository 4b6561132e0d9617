# op: aten.relu
# expect: reference_used
# screen: rejected
# Starts a thread during the call (threading reached through torch.cuda, which imports it),
# lets it compute the answer with torch, and joins it before returning: nothing is left
# running, and torch's dispatch modes are per thread, so a recorder on the calling thread alone
# sees nothing.
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(ptr):
    tl.store(ptr, 0.0)


class _Box:
    pass


def kernel(x):
    scratch = torch.empty(1, dtype=torch.float32, device=x.device)
    _touch[(1,)](scratch)
    box = _Box()

    def work():
        box.out = torch.relu(x)

    worker = torch.cuda.threading.Thread(target=work)
    worker.start()
    worker.join()
    return box.out
