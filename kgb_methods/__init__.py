"""Generation methods built into kgb. ``reference`` ships the known-good kernels."""
