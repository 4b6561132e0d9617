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
