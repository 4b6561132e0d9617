import torch
from task import input_t, output_t
from utils import mismatches


def ref_kernel(data: input_t) -> output_t:
    return data.sum(dim=1, dtype=torch.float64).to(torch.float32)


def generate_input(rows: int, cols: int, seed: int) -> input_t:
    torch.manual_seed(seed)
    return torch.randn(rows, cols, dtype=torch.float32).to("cuda")


def check_implementation(data: input_t, output: output_t):
    """A (bool, message) answer, as some GPU MODE problems give."""
    reason = mismatches(output, ref_kernel(data), rtol=1e-5, atol=1e-4 * data.shape[1])
    return (not reason, reason)
