"""The one exception the public API raises on bad input."""


class InputError(ValueError):
    """Bad user input: a kernel file, expression, device, configuration or override.

    The message is complete and user-facing (the CLI prints it as is): it names the file, field,
    access, key or value at fault and says what would be valid.
    """
