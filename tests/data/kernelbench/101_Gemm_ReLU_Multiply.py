import torch
import torch.nn as nn


class Model(nn.Module):
    """A Linear layer, then ReLU, then multiplication by a constant."""

    def __init__(self, in_features, out_features, multiplier):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier

    def forward(self, x):
        x = self.gemm(x)
        x = torch.relu(x)
        return x * self.multiplier


batch_size = 128
in_features = 1024
out_features = 512
multiplier = 1.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, multiplier]
