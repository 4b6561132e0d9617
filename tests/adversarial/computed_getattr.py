# op: aten.relu
# expect: no_triton_launch
# screen: rejected
# Hides the torch call behind a computed attribute name.
import torch
import triton
import triton.language as tl


def kernel(x):
    return getattr(torch, "re" + "lu")(x)
