from typing import TypeVar

import torch

input_t = TypeVar("input_t", bound=tuple[torch.Tensor, torch.Tensor, float])
output_t = TypeVar("output_t", bound=torch.Tensor)
