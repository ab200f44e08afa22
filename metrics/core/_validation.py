"""The one place where options and settings are checked.

One style: a ``*_problem`` function says what is wrong with a value (or None), and the caller
raises naming where. Every public function states its options' constraints as data
(:func:`metrics.core._constraints.validate_params`, whose constraints word their refusals with
the ``*_problem`` functions here), and the command line checks its options through
:mod:`metrics.core._options`, so a bad value is refused the same way wherever it comes from: a
:class:`ParameterError` (an :class:`~metrics.core._errors.InputError`) whose message starts with
the parameter's name. The ``check_*`` functions raise the same error inline, for a value whose
choices are known only when the function runs (the error types of the Diag-HOI registry). The
command line shows the same message with the option that sets the parameter (``delta`` ↔
``--delta``, see :func:`flag_of`). The readers of settings files (the platform's study specs)
raise an ``InputError`` naming the file and the key, followed by the same problems.

Kept free of numpy and pandas at import, so that ``--help`` stays light.

>>> range_problem(7, 0, 1)
'must be a number in [0, 1], got 7'
>>> check_choice("combine", "median", ("arithmetic", "geometric", "min"))
Traceback (most recent call last):
metrics.core._validation.ParameterError: combine must be one of arithmetic, geometric, min, got 'median'
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import cast

from metrics.core._errors import InputError

MAX_SEED = 2**32 - 1        # numpy's seeds
MAX_RESAMPLES = 100_000     # bootstrap resamples


class ParameterError(InputError):
    """A parameter value out of its range or choices: ``"<parameter> <problem>"``."""

    def __init__(self, parameter: str, problem: str):
        super().__init__(f"{parameter} {problem}")
        self.parameter = parameter
        self.problem = problem


def short(text: str) -> str:
    """``text``, cut to its first 20 characters when it is longer than 24.

    >>> short("9" * 40)
    '99999999999999999999... (40 characters)'
    """
    return text if len(text) <= 24 else f"{text[:20]}... ({len(text)} characters)"


def shown(value) -> str:
    """A value as a message shows it: a number as written, anything else quoted, both short.

    >>> shown(7), shown("x")
    ('7', "'x'")
    """
    return short(str(value) if isinstance(value, Real) else repr(value))


def interval_text(low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> str:
    """``in [0, 1]``, ``in (0, 1]``, ``> 0`` ...: the interval as the messages write it.

    >>> interval_text(0, 1, low_open=True), interval_text(0, math.inf, low_open=True)
    ('in (0, 1]', '> 0')
    """
    if high == math.inf:
        return f"{'>' if low_open else '≥'} {low:g}"
    return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def range_problem(value, low: float, high: float, *, low_open: bool = False, high_open: bool = False,
                  given: str | None = None) -> str | None:
    """What is wrong with ``value`` for the range, or None when it is a finite number in it;
    ``given`` is how the message shows the value (default :func:`shown`).

    >>> range_problem(0, 0, 1, low_open=True)
    'must be a number in (0, 1], got 0'
    """
    if type(value) is float or (not isinstance(value, bool) and isinstance(value, Real)):   # float: no ABC look-up
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer beyond any float
            finite = False
        number = cast(float, value)
        if finite and (low < number if low_open else low <= number) and (number < high if high_open else number <= high):
            return None
    interval = interval_text(low, high, low_open=low_open, high_open=high_open)
    return f"must be a number {interval}, got {given if given is not None else shown(value)}"


def whole_problem(value, low: int, high: int | None = None, *, given: str | None = None) -> str | None:
    """What is wrong with ``value`` for the whole numbers ``low..high`` (no upper end when
    ``high`` is None), or None."""
    if isinstance(value, bool) or not isinstance(value, Integral) or int(value) < low \
            or (high is not None and int(value) > high):
        wanted = f"in {low}..{high}" if high is not None else f"≥ {low}"
        return f"must be a whole number {wanted}, got {given if given is not None else shown(value)}"
    return None


def array_problem(array, *, finite: bool = True) -> str | None:
    """What is wrong with a NumPy array that must hold real numbers, or None: Python objects,
    complex numbers, text and booleans are refused by kind, and (with ``finite``) the first
    value that is NaN or infinite by its index. The readers of arrays (embeddings, matrices)
    say it after the file and the array's name.

    >>> import numpy as np
    >>> array_problem(np.array([1 + 2j]))
    'holds complex numbers (complex128), not real ones'
    >>> array_problem(np.array([[0.5, float("nan")]]))
    'value [0, 1] is nan: not finite'
    """
    import numpy as np

    kind = array.dtype.kind
    if kind == "O":
        return "holds Python objects, not numbers"
    if kind == "c":
        return f"holds complex numbers ({array.dtype}), not real ones"
    if kind not in "iuf":
        return f"holds {array.dtype} values, not numbers"
    if finite and kind == "f":
        bad = np.flatnonzero(~np.isfinite(array))
        if bad.size:
            at = np.unravel_index(int(bad[0]), array.shape)
            return f"value [{', '.join(map(str, at))}] is {array[at]}: not finite"
    return None


def check_choice(name: str, value, choices) -> str:
    """``value`` when it is one of ``choices``."""
    if value not in choices:
        raise ParameterError(name, f"must be one of {', '.join(map(str, choices))}, got {shown(value)}")
    return value


def check_choices(name: str, values, choices) -> tuple:
    """Each of ``values`` one of ``choices``, as a tuple."""
    values = (values,) if isinstance(values, str) else tuple(values)
    for value in values:
        check_choice(name, value, choices)
    return values


def flag_of(parameter: str, flags: dict[str, str] | None = None) -> str:
    """The command-line option that sets ``parameter``: ``flags[parameter]`` when a command
    names it differently, else ``--`` and the name with dashes.

    >>> flag_of("score_threshold"), flag_of("interpolation", {"interpolation": "--ap-interpolation"})
    ('--score-threshold', '--ap-interpolation')
    """
    return (flags or {}).get(parameter) or "--" + parameter.replace("_", "-")


# ---------------------------------------------------------------- values of a settings file
# The readers of settings files (study specs) name the file and the key, then say one of these.
def text_problem(value) -> str | None:
    """What is wrong with ``value`` for a non-empty string, or None.

    >>> text_problem(" ")
    "must be a non-empty string, got ' '"
    """
    return None if isinstance(value, str) and value.strip() else f"must be a non-empty string, got {value!r}"


def boolean_problem(value) -> str | None:
    """What is wrong with ``value`` for true or false, or None."""
    return None if isinstance(value, bool) else f"must be true or false, got {value!r}"


def at_least_problem(value, minimum: int, *, maximum: int = 2**31 - 1) -> str | None:
    """What is wrong with ``value`` for a whole number of at least ``minimum`` (and at most
    ``maximum``, a 32-bit column), or None: :func:`whole_problem`'s words.

    >>> at_least_problem(0, 1), at_least_problem("two", 1)
    ('must be a whole number ≥ 1, got 0', "must be a whole number ≥ 1, got 'two'")
    """
    problem = whole_problem(value, minimum)
    if problem is None and int(value) > maximum:
        return whole_problem(value, minimum, maximum)
    return problem


def above_problem(value, bound: float) -> str | None:
    """What is wrong with ``value`` for a number above ``bound``, or None: :func:`range_problem`'s
    words.

    >>> above_problem(0, 0.0)
    'must be a number > 0, got 0'
    """
    return range_problem(value, bound, math.inf, low_open=True)


def kind_problem(value, kind: type) -> str | None:
    """What is wrong with ``value`` for a value of ``kind`` (a whole number is a float too; true
    and false are booleans only), or None.

    >>> kind_problem(3, float), kind_problem(True, int)
    (None, 'must be of type int, got True')
    """
    if isinstance(value, bool) and kind is not bool:
        ok = False
    else:
        ok = isinstance(value, kind) or (kind is float and isinstance(value, int))
    return None if ok else f"must be of type {kind.__name__}, got {value!r}"
