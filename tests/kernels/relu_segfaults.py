# Raises SIGSEGV in its own process: the worker dies; the harness must answer crashed.
import faulthandler


def kernel(x):
    faulthandler._sigsegv()
