# op: aten.relu
# expect: screen_rejected
# Reaches the reference through torch.ops.aten.
import torch
import triton
import triton.language as tl


def kernel(x):
    return torch.ops.aten.relu(x)
