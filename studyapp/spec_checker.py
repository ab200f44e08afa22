"""Typed reads of a spec file's TOML tables, each error naming the file and the key."""

from __future__ import annotations

from metrics import InputError


class _Checker:
    """Typed reads of a TOML table, with errors naming the file and the key."""

    def __init__(self, name: str, table: dict, prefix: str = ""):
        self.name, self.table, self.prefix = name, table, prefix

    def fail(self, key: str, message: str):
        raise InputError(f"{self.name}: key '{self.prefix}{key}' {message}")

    def unknown(self, allowed: set[str]) -> None:
        for key in self.table:
            if key not in allowed:
                raise InputError(f"{self.name}: unknown key '{self.prefix}{key}' "
                                 f"(allowed: {', '.join(sorted(allowed))})")

    def text(self, key: str, default=None, required: bool = False):
        if key not in self.table:
            if required:
                raise InputError(f"{self.name}: missing key '{self.prefix}{key}'")
            return default
        value = self.table[key]
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"must be a non-empty string, got {value!r}")
        return value

    def integer(self, key: str, default: int, minimum: int):
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be a whole number, got {value!r}")
        if value < minimum:
            self.fail(key, f"must be at least {minimum}, got {value}")
        if value > 2**31 - 1:
            self.fail(key, f"is too large ({value})")
        return value

    def number(self, key: str, minimum_above: float) -> float:
        if key not in self.table:
            raise InputError(f"{self.name}: missing key '{self.prefix}{key}'")
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(key, f"must be a number, got {value!r}")
        if not value > minimum_above:
            self.fail(key, f"must be above {minimum_above}, got {value}")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.table.get(key, default)
        if not isinstance(value, bool):
            self.fail(key, f"must be true or false, got {value!r}")
        return value

    def table_of(self, key: str) -> dict:
        value = self.table.get(key, {})
        if not isinstance(value, dict):
            self.fail(key, f"must be a table ([{key}]), got {value!r}")
        return value
