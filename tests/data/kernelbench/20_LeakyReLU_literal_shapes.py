import torch
import torch.nn as nn


class Model(nn.Module):
    """Leaky ReLU with a given negative slope. Its input shape is a literal inside
    get_inputs() (no module-level sizes), so it cannot be scaled down."""

    def __init__(self, negative_slope):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.randn(128, 4096)]


def get_init_inputs():
    return [0.02]
