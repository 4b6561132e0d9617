import torch
from task import input_t, output_t
from utils import checked_against


def ref_kernel(data: input_t) -> output_t:
    """Writes alpha * x into the output buffer the input holds, and returns it."""
    x, out, alpha = data
    out.copy_(x * alpha)
    return out


def generate_input(n: int, seed: int) -> input_t:
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    x = torch.rand(n, device="cuda", generator=gen)
    out = torch.empty(n, device="cuda")
    return x, out, 0.5 + (n % 7) / 4


check_implementation = checked_against(ref_kernel, rtol=1e-6, atol=0)
