"""Typed reads of a spec file's TOML tables, each error naming the file and the key.

What each key accepts is data: :data:`SPEC_KEYS` maps the dotted key to a constraint of
:mod:`metrics.core` (the same ones a public function's options use, so a mistake reads alike in
a spec and an option), and one generic test feeds every key and every public function's options
each constraint's invalid values (``tests/metrics/test_parameter_constraints.py``). Checks that
need more than the key's own value (a code that must differ from another, a budget within the
item count) follow the read.
"""

from __future__ import annotations

from metrics import InputError
from metrics.core import POSITIVE, Boolean, Count, Interval, Options, Text

SPEC_KEYS = {
    "study_type": Text(), "slug": Text(), "title": Text(), "instructions": Text(), "access_code": Text(),
    "raters_per_item": Count(1), "claim_timeout_minutes": Count(1), "items_per_annotator": Count(1),
    "order": Options(("random", "fixed")),
    "items.source": Text(), "items.dataset": Text(), "items.path": Text(), "practice.path": Text(),
    "quality.attention_checks": Count(0), "quality.repeat_items": Count(0),
    "answers.cant_judge": Boolean(), "answers.comments": Boolean(), "answers.min_seen_ms": Count(0),
    "display.synset_codes": Boolean(), "display.seconds_per_item": POSITIVE,
    "prolific.completion_code": Text(), "prolific.completion_url": Text(),
    "prolific.attention_failed_code": Text(), "prolific.attention_fail_limit": Count(1),
    "prolific.screened_out_code": Text(), "prolific.routed_code": Text(),
    "example.explanation": Text(),
    "comprehension.question": Text(), "comprehension.answer": Text(),
    "routing.min_ratings": Count(2), "routing.min_consistency": POSITIVE,
    "llm.ratings": Text(),
    "active.budget": POSITIVE, "active.floor": Interval(0, 1, low_open=True), "active.seed": Count(0),
    "adaptive.target_se": POSITIVE, "adaptive.min_raters": Count(1), "adaptive.max_raters": Count(1),
    "adaptive.refit_every": Count(1),
}
REQUIRED = object()   # ``_Checker.get``'s default for a key that must be given


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

    def get(self, key: str, default=REQUIRED):
        """The value of ``key`` once :data:`SPEC_KEYS` accepts it; ``default`` when it is not
        given (unless it is required)."""
        if key not in self.table:
            if default is REQUIRED:
                self._required(key)
            return default
        self.refuse(key, SPEC_KEYS[self.prefix + key].problem(self.table[key]))
        return self.table[key]

    def table_of(self, key: str) -> dict:
        value = self.table.get(key, {})
        if not isinstance(value, dict):
            self.fail(key, f"must be a table ([{key}]), got {value!r}")
        return value
