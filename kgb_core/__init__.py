"""kgb core: what every source, backend and method plugin shares.

Plugins import ``hookimpl`` from here so that none of them imports pluggy itself, and
the core can change how hooks are wired without touching a plugin.
"""

from kgb_core.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = ["hookimpl", "__version__"]
