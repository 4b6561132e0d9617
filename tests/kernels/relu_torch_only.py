# Right values, but no Triton kernel at all: the answer must be no_triton_launch.
import torch


def kernel(x):
    return torch.relu(x)
