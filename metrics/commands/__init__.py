"""One private module per ``python -m metrics`` command (see ``metrics.cli``); the commands are
their public face, so this package exports no name."""

__all__: list[str] = []
