# Dereferences a null pointer: SIGSEGV kills the worker; the harness must answer crashed.
import ctypes


def kernel(x):
    ctypes.string_at(0)
