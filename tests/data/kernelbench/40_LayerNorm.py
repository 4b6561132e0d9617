import torch
import torch.nn as nn


class Model(nn.Module):
    """LayerNorm over the last dimension with a learnable weight and bias."""

    def __init__(self, hidden_size):
        super().__init__()
        self.ln = nn.LayerNorm(hidden_size)

    def forward(self, x):
        return self.ln(x)


batch_size = 16
seq_len = 512
hidden_size = 4096


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size]
