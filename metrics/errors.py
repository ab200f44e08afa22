"""The one exception type for bad input: its message is a single line naming the culprit."""


class InputError(ValueError):
    """Bad input (file, line, field or value). The CLI prints it as one line and exits 2."""
