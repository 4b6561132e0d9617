"""Helpers the suite's GPU MODE-style problems share (written for kgb's tests, in the shape of
GPU MODE's problems/<set>/utils.py: a check built from the reference)."""
import torch


def mismatches(received, expected, rtol, atol):
    """Why ``received`` is not ``expected`` within the tolerance, or '' when it is."""
    if not isinstance(received, torch.Tensor) or received.shape != expected.shape:
        return "shape mismatch"
    if received.dtype != expected.dtype:
        return f"dtype {received.dtype}, expected {expected.dtype}"
    bad = (received.float() - expected.float()).abs() > atol + rtol * expected.float().abs()
    bad |= torch.isnan(received) != torch.isnan(expected)
    count = int(bad.sum())
    return f"{count} elements differ" if count else ""


def checked_against(reference, rtol=1e-5, atol=1e-8):
    def check_implementation(data, output):
        return mismatches(output, reference(data), rtol, atol)
    return check_implementation
