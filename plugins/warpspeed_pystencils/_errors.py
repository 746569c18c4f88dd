"""The plugin's errors: warpspeed's ``InputError``, imported when one is raised so that importing the plugin
does not import warpspeed."""

from __future__ import annotations


def input_error(msg: str) -> Exception:
    """A ``warpspeed.InputError`` saying ``msg`` (raise it)."""
    from warpspeed import InputError

    return InputError(msg)
