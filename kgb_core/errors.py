"""Errors a user can cause, kept apart from bugs.

The CLI prints a ``UserError`` as one line and exits with code 2; anything else is a bug
and keeps its traceback.
"""


class UserError(Exception):
    """Something the user can fix: an unknown name, a bad config key, a missing file."""


class PluginError(Exception):
    """A plugin registered something invalid (a duplicate name, a malformed spec)."""
