# op: aten.add
# In the style of FlagGems' pointwise ops and Triton's vector-add tutorial: operands broadcast
# and made contiguous with torch (views and copies only), a 1-D kernel whose block size a
# @triton.heuristics picks and whose grid is a callable of the launch's META, the output
# allocated in the promoted dtype. (Autotuned kernels do not run in Triton's interpreter yet:
# issue 22.)
import torch
import triton
import triton.language as tl


@triton.heuristics({"BLOCK_SIZE": lambda args: 1024 if args["n_elements"] >= 4096 else 256})
@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (a + b).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(a, b):
    a, b = torch.broadcast_tensors(a, b)
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty(a.shape, dtype=torch.result_type(a, b), device=a.device)
    n_elements = out.numel()
    if n_elements:
        grid = lambda META: (triton.cdiv(n_elements, META["BLOCK_SIZE"]),)  # noqa: E731
        _add_kernel[grid](a, b, out, n_elements)
    return out
