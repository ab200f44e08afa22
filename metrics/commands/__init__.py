"""One module per ``python -m metrics`` command (see ``metrics.cli``)."""
