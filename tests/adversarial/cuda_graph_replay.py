# op: aten.relu
# expect: screen_rejected
# Only the screen can refuse it: on a GPU a replayed graph's launches pass no launch counter
# and no recorder (on the CPU backend the capture fails at run time).
# Captures its work once in a CUDA graph and replays it.
import torch
import triton
import triton.language as tl


def kernel(x):
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = x * 1
    graph.replay()
    return out
