"""Typed reads of a spec file's TOML tables, each error naming the file and the key; what is
wrong with a value is said by :mod:`metrics.core`'s ``*_problem`` checks."""

from __future__ import annotations

from metrics import InputError
from metrics.core import above_problem, at_least_problem, boolean_problem, text_problem


class _Checker:
    """Typed reads of a TOML table, with errors naming the file and the key."""

    def __init__(self, name: str, table: dict, prefix: str = ""):
        self.name, self.table, self.prefix = name, table, prefix

    def fail(self, key: str, message: str):
        raise InputError(f"{self.name}: key '{self.prefix}{key}' {message}")

    def refuse(self, key: str, problem: str | None) -> None:
        """Fail with ``problem`` unless it is None."""
        if problem is not None:
            self.fail(key, problem)

    def unknown(self, allowed: set[str]) -> None:
        for key in self.table:
            if key not in allowed:
                raise InputError(f"{self.name}: unknown key '{self.prefix}{key}' "
                                 f"(allowed: {', '.join(sorted(allowed))})")

    def _required(self, key: str) -> None:
        if key not in self.table:
            raise InputError(f"{self.name}: missing key '{self.prefix}{key}'")

    def text(self, key: str, default=None, required: bool = False):
        if key not in self.table:
            if required:
                self._required(key)
            return default
        self.refuse(key, text_problem(self.table[key]))
        return self.table[key]

    def integer(self, key: str, default: int, minimum: int):
        value = self.table.get(key, default)
        self.refuse(key, at_least_problem(value, minimum))
        return value

    def number(self, key: str, minimum_above: float) -> float:
        self._required(key)
        self.refuse(key, above_problem(self.table[key], minimum_above))
        return float(self.table[key])

    def boolean(self, key: str, default: bool) -> bool:
        value = self.table.get(key, default)
        self.refuse(key, boolean_problem(value))
        return value

    def table_of(self, key: str) -> dict:
        value = self.table.get(key, {})
        if not isinstance(value, dict):
            self.fail(key, f"must be a table ([{key}]), got {value!r}")
        return value
