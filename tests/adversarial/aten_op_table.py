# op: aten.relu
# expect: no_triton_launch
# screen: rejected
# Reaches the reference through torch.ops.aten.
import torch
import triton
import triton.language as tl


def kernel(x):
    return torch.ops.aten.relu(x)
