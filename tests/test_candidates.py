"""Code extraction from a model's answer: one block, several blocks, none."""

from __future__ import annotations

from kgb_core.candidates import extract_code

KERNEL = "import triton\n\ndef kernel(x):\n    return x\n"


def test_a_single_fenced_block_is_taken():
    assert extract_code(f"Sure!\n```python\n{KERNEL}```\nDone.") == KERNEL


def test_the_last_block_defining_kernel_wins_over_usage_snippets():
    answer = (f"```python\n# draft\ndef kernel(x):\n    pass\n```\nBetter:\n```python\n{KERNEL}```"
              f"\nUse it like this:\n```python\nprint(kernel(x))\n```")
    assert extract_code(answer) == KERNEL


def test_an_unfenced_python_answer_is_taken_as_is_and_prose_gives_no_code():
    assert extract_code(KERNEL) == KERNEL
    assert extract_code("I am sorry, I cannot write this kernel.") == ""


# -- answer shapes models give (docs/methods.md, "Reading the code out of an answer") ------------
DRAFT = "def kernel(x):\n    return None  # draft\n"
USAGE = "x = torch.randn(8)\nprint(kernel(x))\n"


def test_a_fence_labelled_triton_or_anything_else_or_nothing_is_read():
    for label in ("triton", "Python", "py3", "", "python title=kernel.py"):
        assert extract_code(f"Here:\n```{label}\n{KERNEL}```\n") == KERNEL, label


def test_tilde_fences_and_longer_fences_holding_a_fence():
    assert extract_code(f"~~~python\n{KERNEL}~~~\n") == KERNEL
    inner = KERNEL + '\nDOC = """\n```\nnot the end\n```\n"""\n'
    assert extract_code(f"````python\n{inner}````\n") == inner


def test_reasoning_first_then_the_kernel():
    answer = ("Let me think about the grid. Each program handles BLOCK elements, and the mask "
              f"covers the tail.\n\nFinal answer:\n\n```python\n{KERNEL}```\n")
    assert extract_code(answer) == KERNEL


def test_a_thinking_block_with_a_draft_is_never_the_answer():
    answer = (f"<think>\nFirst try:\n```python\n{DRAFT}```\nno, wrong.\n</think>\n"
              f"```python\n{KERNEL}```\n")
    assert extract_code(answer) == KERNEL
    # the draft comes later than the thinking block's end would suggest: still dropped
    answer = f"```python\n{KERNEL}```\n<thinking>\n```python\n{DRAFT}```\n</thinking>"
    assert extract_code(answer) == KERNEL


def test_a_usage_example_before_the_kernel_is_passed_over():
    answer = f"Usage:\n```python\n{USAGE}```\nThe kernel:\n```python\n{KERNEL}```\n"
    assert extract_code(answer) == KERNEL


def test_several_blocks_none_defining_kernel_take_the_last_python_one():
    answer = f"```python\nimport triton\n```\n```bash\n$ pip install triton (\n```\n"
    assert extract_code(answer) == "import triton\n"


def test_an_answer_cut_off_inside_its_block_keeps_what_it_has():
    assert extract_code(f"```python\n{KERNEL}") == KERNEL


def test_another_benchmarks_entry_point_wins_over_the_problem_echoed_after_it():
    """KernelBench's ModelNew and GPU MODE's custom_kernel define the answer as kernel does:
    a model that repeats the problem's own code after its answer is still read right."""
    for entry in ("class ModelNew(nn.Module):\n    pass\n", "def custom_kernel(data):\n    pass\n"):
        answer = (f"```python\n{entry}```\nFor reference, the problem was:\n"
                  f"```python\nclass Model(nn.Module):\n    pass\n```\n")
        assert extract_code(answer) == entry
