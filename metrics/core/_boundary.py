"""The command lines' error boundary: the one line each of them prints for a refused input."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from metrics.core._errors import OPTIONAL_MODULES, InputError, missing_extra, os_error_message
from metrics.core._validation import ParameterError, flag_of


def error_message(exc: BaseException, *, options: dict[str, str] | None = None) -> str | None:
    """The one line a command prints for ``exc`` (after its ``<command>: error:`` prefix), or None
    for an exception that is not the input's fault (a bug, which keeps its traceback). Both command
    lines use it, so one mistake reads one way everywhere.

    With ``options`` (a command's parameter -> flag map, ``{}`` for the default dashes), a
    parameter's refusal names its command-line option.

    >>> error_message(InputError("ratings.csv line 3: rating must be a number"))
    'ratings.csv line 3: rating must be a number'
    >>> from metrics.core._validation import ParameterError
    >>> error_message(ParameterError("iou", "must be in (0, 1], got 2"), options={})
    'argument --iou: must be in (0, 1], got 2'
    >>> error_message(KeyError("bug")) is None
    True
    """
    if isinstance(exc, ParameterError) and options is not None:
        return f"argument {flag_of(exc.parameter, options)}: {exc.problem}"
    if isinstance(exc, (InputError, KeyboardInterrupt)):
        return str(exc) or "interrupted"
    if isinstance(exc, OSError):
        return os_error_message(exc)
    if isinstance(exc, ModuleNotFoundError) and exc.name in OPTIONAL_MODULES:
        return missing_extra(exc.name)
    return None


def exit_quietly_on_closed_output(main: Callable[[], int]) -> int:
    """``main()``'s status; when the reader of standard output went away (``| head``), the rest
    of the output is dropped and the status is 141 (SIGPIPE's, as a shell tool ends), with no
    traceback."""
    try:
        status = main()
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # no second error at exit
        return 141
