"""Option types of the command lines: every number has its range and every path its role,
checked while the command line is parsed, before anything is read or written.

``type=integer(1, 64)`` takes whole numbers in 1..64; ``type=number(0, 1)`` finite numbers in
[0, 1] (``low_open`` / ``high_open`` exclude an end); ``input_file``, ``input_path`` (a file
or a folder), ``output_file`` and ``output_dir`` check a path for its role. A refused value
ends as one line naming the option (:class:`OneLineParser`).

>>> integer(1, 8)("3")
3
>>> number(0, 1, low_open=True)("0")
Traceback (most recent call last):
argparse.ArgumentTypeError: must be a number in (0, 1], got 0
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Generic, TypeVar

from metrics.core._constraints import Boolean, validate_params
from metrics.core._errors import InputError
from metrics.core._inputs import check_readable
from metrics.core._validation import MAX_SEED, range_problem, short, whole_problem

T = TypeVar("T")


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its usage errors on one line (``prog: error: message``)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class _WholeNumber:
    """The option type :func:`integer` makes; ``range`` is ``(low, high)``."""

    __name__ = "integer"

    def __init__(self, low: int, high: int):
        self.range = (low, high)

    def __call__(self, text: str) -> int:
        low, high = self.range
        stripped = text.strip()
        digits = stripped.lstrip("+-")
        if not digits.isdigit():
            raise argparse.ArgumentTypeError(whole_problem(None, low, high, given=repr(text)))
        value = int(stripped) if len(digits) <= 20 else None
        problem = whole_problem(value, low, high, given=short(text))
        if problem or value is None:
            raise argparse.ArgumentTypeError(problem)
        return value


class _FiniteNumber:
    """The option type :func:`number` makes; ``range`` is ``(low, high, low_open, high_open)``."""

    __name__ = "number"

    def __init__(self, low: float, high: float, low_open: bool, high_open: bool):
        self.range = (low, high, low_open, high_open)

    def __call__(self, text: str) -> float:
        low, high, low_open, high_open = self.range
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(range_problem(None, low, high, low_open=low_open,
                                                           high_open=high_open, given=repr(text))) from None
        problem = range_problem(value, low, high, low_open=low_open, high_open=high_open, given=short(text))
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value


def integer(low: int, high: int) -> Callable[[str], int]:
    """An option type: a whole number in ``low..high`` (checked by :mod:`metrics.core._validation`)."""
    return _WholeNumber(low, high)


@validate_params({"low_open": Boolean(), "high_open": Boolean()})
def number(low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> Callable[[str], float]:
    """An option type: a finite number between ``low`` and ``high`` (ends included unless
    ``low_open`` / ``high_open``; checked by :mod:`metrics.core._validation`)."""
    return _FiniteNumber(low, high, low_open, high_open)


class _CommaList(Generic[T]):
    """The option type :func:`comma_list` makes; ``item`` is the type of each value."""

    __name__ = "comma_list"

    def __init__(self, item: Callable[[str], T]):
        self.item = item

    def __call__(self, text: str) -> list[T]:
        values = [v for v in text.split(",") if v.strip()]
        if not values:
            raise argparse.ArgumentTypeError("give at least one value")
        parsed = []
        for value in values:
            try:
                parsed.append(self.item(value))
            except argparse.ArgumentTypeError as exc:
                raise argparse.ArgumentTypeError(f"each value {exc}") from None
        return parsed


def comma_list(item: Callable[[str], T]) -> Callable[[str], list[T]]:
    """An option type: comma-separated values, each of the type ``item``."""
    return _CommaList(item)


def given_once(values, option: str) -> None:
    """Refuse, naming ``option``, a value that a repeatable option (``action="append"``) was
    given twice in one command (values compared without surrounding blanks).

    >>> given_once(["m1", "m2"], "--metric")
    >>> given_once(["m1", " m1"], "--metric")
    Traceback (most recent call last):
    metrics.core._errors.InputError: --metric 'm1' is given twice in this command: give each value once
    """
    seen: set[str] = set()
    for value in values or ():
        key = str(value).strip()
        if key in seen:
            raise InputError(f"{option} {key!r} is given twice in this command: give each value once")
        seen.add(key)


def _checked(check):
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError("an empty path")
        try:
            check(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text
    parse.__name__ = check.__name__
    return parse


def _input_file(text: str) -> None:
    check_readable(text)


def _input_path(text: str) -> None:
    check_readable(text, folder_ok=True)


def _output_file(text: str) -> None:
    from metrics.core._jsonio import check_output_file
    check_output_file(text)


def _output_dir(text: str) -> None:
    from metrics.core._jsonio import check_output_dir
    check_output_dir(text)


input_file = _checked(_input_file)    # an existing, readable file (not a folder)
input_path = _checked(_input_path)    # an existing, readable file or folder
output_file = _checked(_output_file)  # a file to write: not a folder or device, writable place
output_dir = _checked(_output_dir)    # an output folder: a folder or absent, writable place
seed = integer(0, MAX_SEED)           # a random seed (numpy's range)
