import torch
import torch.nn as nn


class Model(nn.Module):
    """BatchNorm1d over (N, C, L) in training mode: normalises with the batch statistics and
    updates running_mean, running_var and num_batches_tracked."""

    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm1d(num_features)

    def forward(self, x):
        return self.bn(x)


batch_size = 32
num_features = 128
length = 1024


def get_inputs():
    return [torch.randn(batch_size, num_features, length) * 2.0 + 0.5]


def get_init_inputs():
    return [num_features]
