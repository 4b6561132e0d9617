# op: aten.relu
# expect: no_triton_launch
# screen: rejected
# Runs code the screen cannot read.
import torch
import triton
import triton.language as tl


def kernel(x):
    scope = {"torch": torch, "x": x}
    exec("y = torch.relu(x)", scope)
    return scope["y"]
