"""``python -m kgb_core`` is the ``kgb`` command, for machines where the script is not on PATH."""

from kgb_core.cli import main

main()
