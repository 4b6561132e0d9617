# op: aten.t
# expect: tampering
# issue: 21 (torch work the recorder misses: code Triton runs inside a launch)
# launch_argument_runs_torch.py with a real tensor: the output itself is handed to the kernel,
# with an instance attribute that shadows torch's ``untyped_storage`` (the method Triton's
# interpreter calls on every tensor argument inside the launch, where the recorders are
# suspended), and that function does the transpose with a torch copy. A tensor argument must
# carry no attribute of its own.
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(ptr + offsets, tl.load(ptr + offsets))


def kernel(x):
    out = torch.empty((x.shape[1], x.shape[0]), dtype=x.dtype, device=x.device)
    storage = out.untyped_storage

    def untyped_storage():
        out.copy_(x.t())
        return storage()

    out.untyped_storage = untyped_storage
    out.data_ptr_hint = True
    _touch[(1,)](out, BLOCK=1)
    del out.untyped_storage, out.data_ptr_hint
    return out
