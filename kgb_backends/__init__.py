"""Chip backends built into kgb: ``cpu`` (Triton's interpreter) and ``nvidia`` (CUDA).

Other vendors ship as separate distributions under ``plugins/`` and register through the same
``kgb`` entry-point group.
"""
