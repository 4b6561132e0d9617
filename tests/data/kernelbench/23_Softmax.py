import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over dim 1 of a (batch_size, num_features) input."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


batch_size = 64
num_features = 16384


def get_inputs():
    return [torch.randn(batch_size, num_features)]


def get_init_inputs():
    return []
