"""Parameter constraints as data, beside each public function (scikit-learn's parameter
validation, reduced to what the project's options need).

A function states what each option accepts with :func:`validate_params`; the decorator checks
the options given, before the function runs, in :mod:`metrics.core._validation`'s words, and keeps
the table as ``function.parameter_constraints`` so that one generic test can feed every public
function an invalid value of each option (``tests/metrics/test_parameter_constraints.py``).

>>> @validate_params({"delta": Interval(0, 1)})
... def soft(*, delta=0.0):
...     return delta
>>> soft(delta=2)
Traceback (most recent call last):
metrics.core._validation.ParameterError: delta must be a number in [0, 1], got 2
>>> soft.parameter_constraints["delta"].invalid()
[-1, 2, nan, 'text', True]
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from metrics.core._validation import (
    MAX_RESAMPLES,
    MAX_SEED,
    ParameterError,
    at_least_problem,
    boolean_problem,
    range_problem,
    shown,
    text_problem,
    whole_problem,
)

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Interval:
    """A real number between ``low`` and ``high`` (ends included unless open)."""

    low: float
    high: float
    low_open: bool = False
    high_open: bool = False

    def problem(self, value) -> str | None:
        return range_problem(value, self.low, self.high, low_open=self.low_open, high_open=self.high_open)

    def invalid(self) -> list:
        below = self.low if self.low_open else self.low - 1
        above = self.high if self.high_open else self.high + 1
        return [v for v in (below, above) if math.isfinite(v)] + [math.nan, "text", True]


@dataclass(frozen=True)
class Whole:
    """A whole number in ``low..high`` (no upper end when ``high`` is None)."""

    low: int
    high: int | None = None

    def problem(self, value) -> str | None:
        return whole_problem(value, self.low, self.high)

    def invalid(self) -> list:
        return [self.low - 1, *([self.high + 1] if self.high is not None else []), 1.5, "text", True]


@dataclass(frozen=True)
class Options:
    """One of ``choices``."""

    choices: tuple

    def problem(self, value) -> str | None:
        if value in self.choices and not isinstance(value, bool):
            return None
        return f"must be one of {', '.join(map(str, self.choices))}, got {shown(value)}"

    def invalid(self) -> list:
        return ["no such choice", 3]


@dataclass(frozen=True)
class Count:
    """A whole number of at least ``low`` that fits a 32-bit column (a count kept in the database)."""

    low: int

    def problem(self, value) -> str | None:
        return at_least_problem(value, self.low)

    def invalid(self) -> list:
        return [self.low - 1, 2**31, 1.5, "text", True]


@dataclass(frozen=True)
class Text:
    """A string with more than white space."""

    def problem(self, value) -> str | None:
        return text_problem(value)

    def invalid(self) -> list:
        return ["", " ", 3, True]


@dataclass(frozen=True)
class Boolean:
    """True or false (not 0 or 1)."""

    def problem(self, value) -> str | None:
        return boolean_problem(value)

    def invalid(self) -> list:
        return [1, "yes"]


@dataclass(frozen=True)
class OrNone:
    """None, or what ``constraint`` accepts."""

    constraint: Interval | Whole | Options | Count | Text | Boolean | Each

    def problem(self, value) -> str | None:
        return None if value is None else self.constraint.problem(value)

    def invalid(self) -> list:
        return self.constraint.invalid()


def _wanted(constraint) -> str:
    """What ``constraint`` accepts, as its refusals word it: ``a number in [0, 1]``."""
    return constraint.problem(None).removeprefix("must be ").rpartition(", got ")[0]


@dataclass(frozen=True)
class Either:
    """What ``first`` or ``second`` accepts (a whole number or ``"auto"``)."""

    first: Interval | Whole | Options | Count | Text | Boolean
    second: Interval | Whole | Options | Count | Text | Boolean

    def problem(self, value) -> str | None:
        if self.first.problem(value) is None or self.second.problem(value) is None:
            return None
        return f"must be {_wanted(self.first)} or {_wanted(self.second)}, got {shown(value)}"

    def invalid(self) -> list:
        return [v for v in dict.fromkeys([*self.first.invalid(), *self.second.invalid()]) if self.problem(v)]


@dataclass(frozen=True)
class Each:
    """A list (or tuple) whose every item ``constraint`` accepts (a grid of candidates); it must
    hold at least one item unless ``empty``."""

    constraint: Interval | Whole | Options | Count | Text | Boolean
    empty: bool = False

    def problem(self, value) -> str | None:
        if (isinstance(value, (list, tuple)) and (value or self.empty)
                and all(self.constraint.problem(v) is None for v in value)):
            return None
        return f"must be a {'' if self.empty else 'non-empty '}list, each {_wanted(self.constraint)}, got {shown(value)}"

    def invalid(self) -> list:
        return [[self.constraint.invalid()[0]], "text"] if self.empty else [[], [self.constraint.invalid()[0]], "text"]


Constraint = Interval | Whole | Options | Count | Text | Boolean | OrNone | Either | Each

# The constraints many options share, named by what they accept.
FRACTION = Interval(0, 1)                                    # weights, thresholds, shares
POSITIVE_FRACTION = Interval(0, 1, low_open=True)            # IoU thresholds, floors
OPEN_FRACTION = Interval(0, 1, low_open=True, high_open=True)  # confidence levels, a split weight
POSITIVE = Interval(0, math.inf, low_open=True)              # sizes, scales, budgets
RANDOM_SEED = Whole(0, MAX_SEED)                             # numpy's random seeds
RESAMPLES = Whole(0, MAX_RESAMPLES)                          # bootstrap resamples, 0 for none


def validate_params(constraints: Mapping[str, Constraint]) -> Callable[[F], F]:
    """Check the options of the decorated function against ``constraints`` (parameter name ->
    constraint) before it runs; a value refused raises :class:`ParameterError` naming the option.

    Only the values given are checked (a default is trusted), and no argument is converted: the
    function receives what the caller passed. When every constrained parameter is keyword-only
    (the options of a public function), the check reads the keyword arguments alone, so it costs
    a dictionary look-up per option given, whatever the size of the data."""
    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        unknown = set(constraints) - set(signature.parameters)
        if unknown:
            raise TypeError(f"{function.__qualname__} has no parameter {', '.join(sorted(unknown))}")
        keyword_only = all(signature.parameters[name].kind is inspect.Parameter.KEYWORD_ONLY for name in constraints)

        def refuse_invalid(arguments: dict) -> None:
            for name, value in arguments.items():
                constraint = constraints.get(name)
                if constraint is not None and (problem := constraint.problem(value)) is not None:
                    raise ParameterError(name, problem)

        @functools.wraps(function)
        def checked(*args, **kwargs):
            refuse_invalid(kwargs if keyword_only else signature.bind_partial(*args, **kwargs).arguments)
            return function(*args, **kwargs)

        checked.parameter_constraints = dict(constraints)   # type: ignore[attr-defined]
        return checked   # type: ignore[return-value]
    return decorate
