import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d (stride 1, no padding), plus a learnable per-channel bias, then ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        x = x + self.bias
        return torch.relu(x)


batch_size = 32
in_channels = 16
out_channels = 64
height = 128
width = 128
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
