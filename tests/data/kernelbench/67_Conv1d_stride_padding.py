import torch
import torch.nn as nn


class Model(nn.Module):
    """1D convolution with stride and zero padding (nn.Conv1d, with bias)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size,
                                stride=stride, padding=padding)

    def forward(self, x):
        return self.conv1d(x)


batch_size = 16
in_channels = 32
out_channels = 64
length = 4096
kernel_size = 3
stride = 2
padding = 1


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
