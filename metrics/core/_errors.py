"""The one exception type for bad input, and the pieces of the command lines' error boundary."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class InputError(ValueError):
    """Bad input (file, line, field or value). The CLI prints it as one line and exits 2."""


_BREAKS = {code: f"\\x{code:02x}" for code in (*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F, 0x85)}
_BREAKS.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


def one_line(text) -> str:
    """``text`` with its control characters and line separators (which a file's bytes can bring
    into a message: a form feed in a CSV header) written as escapes: a refusal stays one line.

    >>> one_line("header a\\x0cb")
    'header a\\\\x0cb'
    """
    return str(text).translate(_BREAKS)


def os_error_message(exc: OSError) -> str:
    """One line for a file the system refused: the file, what happened, what to do.

    >>> os_error_message(PermissionError(13, "Permission denied", "/x/out.json"))
    '/x/out.json: permission denied; check the path and its permissions'
    """
    what = (exc.strerror or type(exc).__name__).lower()
    where = exc.filename if exc.filename is not None else "a file"
    if exc.filename2 is not None:
        where = f"{where} -> {exc.filename2}"
    return f"{where}: {what}; check the path and its permissions"


@contextmanager
def naming(source) -> Iterator[None]:
    """Refusals raised in the block that do not name ``source`` get it in front
    (``ratings.csv: agreement needs ...``), so an analysis that refuses a file names it; a
    parameter's refusal (it names its option) passes unchanged.

    >>> with naming("r.csv"):
    ...     raise InputError("needs two annotators")
    Traceback (most recent call last):
    metrics.core._errors.InputError: r.csv: needs two annotators
    """
    try:
        yield
    except InputError as exc:
        if hasattr(exc, "parameter") or str(source) in str(exc):
            raise
        raise InputError(f"{source}: {exc}") from None


@contextmanager
def interruptible() -> Iterator[None]:
    """While the block runs, SIGTERM raises ``KeyboardInterrupt("terminated")`` as Ctrl-C does,
    so the temporary files of unfinished outputs are removed on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(_signum, _frame):
        raise KeyboardInterrupt("terminated")

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


OPTIONAL_MODULES = {"matplotlib": ("report", "the report's plots")}   # module -> (extra, what needs it)


def missing_extra(module: str) -> str:
    """One line saying which extra installs ``module``.

    >>> missing_extra("matplotlib")
    "the report's plots need matplotlib, which is not installed: pip install 'hoi-semantic-eval[report]'"
    """
    extra, what = OPTIONAL_MODULES[module]
    return f"{what} need {module}, which is not installed: pip install 'hoi-semantic-eval[{extra}]'"

