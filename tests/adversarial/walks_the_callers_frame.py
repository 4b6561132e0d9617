# op: aten.relu
# expect: no_triton_launch
# screen: rejected
# Climbs into the harness's frames through a traceback, looking for the expected output.
import torch
import triton
import triton.language as tl


def kernel(x):
    try:
        raise RuntimeError
    except RuntimeError as error:
        frame = error.__traceback__.tb_frame.f_back
    return frame.f_locals.get('expected', x)
