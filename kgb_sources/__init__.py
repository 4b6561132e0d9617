"""Operator sources built into kgb. Each sub-package is one source plugin (``aten``, ...)."""
