"""Which ATen operators form the cross-chip set (tag ``mc110``), and how it relates to the
published KernelGenBench list.

The published benchmark (flagos-ai/KernelGenBench, ``src/flagbench/dataset/kernel_list.py``;
names in shared/inventory/kernelgenbench-facts.md, section 1a) runs 110 ATen operators on every
chip. kgb keeps every one of them that describes a computation a Triton kernel can be checked
on, under the same name, and replaces the rest (listed in ``NOT_IN_MC110`` with the reason) by
widely used operators the published list lacks, so that the set still has 110 members.
"""

from __future__ import annotations

MC110_TAG = "mc110"

# The published 110, in the published (alphabetical) order.
PUBLISHED_ATEN = (
    "_index_put_impl_", "_local_scalar_dense", "_softmax", "_to_copy", "acosh", "add", "add_",
    "affine_grid_generator", "amin", "arange", "argmax", "as_strided", "asin", "bernoulli",
    "binary_cross_entropy_with_logits", "bitwise_not", "bmm", "cat", "clone", "contiguous",
    "copy_", "cos", "cosh", "cumsum", "diff", "div", "div_", "embedding", "empty_strided", "eq",
    "erfc", "expand", "expand_as", "exponential_", "fill_", "floor", "floor_divide", "fmax",
    "full", "gather", "gt", "hardsigmoid", "heaviside", "huber_loss", "i0", "im2col", "index",
    "index_put_", "index_select", "item", "le", "linear", "log10", "log_sigmoid_backward",
    "logaddexp2", "logit", "margin_ranking_loss", "masked_fill_", "matmul", "mean", "mish",
    "mish_backward", "mm", "mul", "narrow", "neg", "new_empty_strided", "new_ones", "ones_like",
    "pairwise_distance", "poisson", "polygamma", "pow", "prelu", "reflection_pad1d_backward",
    "renorm", "reshape", "resolve_conj", "resolve_neg", "rot90", "rrelu_with_noise",
    "rrelu_with_noise_backward", "rsqrt", "rsub", "scalar_tensor", "scatter", "select",
    "select_backward", "sgn", "silu", "sin", "smooth_l1_loss_backward", "soft_margin_loss",
    "softmax", "softplus_backward", "sort", "special_entr", "square", "stack", "sub", "sum", "t",
    "to", "unsafe_split", "unsafe_split_with_sizes", "unsqueeze", "upsample_nearest2d_backward",
    "zero_", "zeros", "zeros_like",
)

# Published operators kgb does not benchmark, and why. Operators that merely duplicate another
# one's kernel are covered by that one (named in the reason), never counted twice.
NOT_IN_MC110 = {
    "_local_scalar_dense": "returns a Python number to the host: there is no kernel to write",
    "item": "returns a Python number to the host: there is no kernel to write",
    "empty_strided": "its output is uninitialised memory: no value can be checked",
    "new_empty_strided": "its output is uninitialised memory: no value can be checked",
    "resolve_conj": "the identity on real tensors (Triton has no complex type): covered by clone",
    "resolve_neg": "the identity on real tensors (Triton has no complex type): covered by clone",
    "to": "the same computation as _to_copy, which kgb keeps",
    "_softmax": "softmax(x, dim) with half_to_float=False: the same kernel as softmax, kept",
    "_index_put_impl_": "the implementation behind index_put_ (with accumulate), which kgb keeps",
    "bernoulli": "random: its values follow torch's Philox stream, which a Triton kernel cannot "
                 "reproduce, and a distribution test could not tell a right kernel from a wrong one "
                 "on the small cases",
    "poisson": "random: as bernoulli, its values depend on torch's generator",
    "exponential_": "random: as bernoulli, its values depend on torch's generator",
}

# Widely used operators that take the places of the twelve above. None depends on a vendor:
# no fp64 path, no int64-only path, no random numbers.
MC110_ADDITIONS = (
    "exp", "abs", "relu", "gelu", "sigmoid", "tanh", "clamp", "amax", "log_softmax",
    "layer_norm", "rms_norm", "addmm",
)

MC110 = tuple(name for name in PUBLISHED_ATEN if name not in NOT_IN_MC110) + MC110_ADDITIONS
