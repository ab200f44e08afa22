"""Plugins from other installed packages: entry points found and loaded on first use, each on its
own, so a broken one is skipped with one line naming its entry point while the others load.

The three registries of the project each hold one :class:`PluginGroup`: datasets
(:mod:`metrics.datasets`), Diag-HOI error types (:mod:`metrics.diagnosis`) and study types
(``studyapp.studytypes``). A group's ``add`` checks a loaded object and registers it; whatever an
entry point raises while it is imported or added (a missing dependency, a wrong class, a name
already taken) is logged as one warning line on the ``metrics.plugins`` logger and kept in
:attr:`PluginGroup.records`, which ``python -m metrics plugins`` and ``python -m studyapp
plugins`` list.

>>> group = PluginGroup(PLUGIN_GROUPS["dataset"], kind="dataset", add=lambda obj, name: obj)
>>> isinstance(group.load(), dict), all(r.kind == "dataset" for r in group.records)
(True, True)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from metrics.core._errors import one_line

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

#: The entry-point group of each kind of plugin (``[project.entry-points."<group>"]``).
PLUGIN_GROUPS = {
    "dataset": "hoi_semantic_eval.datasets",
    "error type": "hoi_semantic_eval.diagnosis_errors",
    "study type": "hoi_semantic_eval.study_types",
}

LOG = logging.getLogger("metrics.plugins")


@dataclass(frozen=True)
class PluginRecord:
    """One entry point: its kind, name, target (``package.module:attribute``), the distribution
    that declares it (``name version``), and what became of it: ``built in`` (the project's own),
    ``loaded``, ``failed`` (with the one-line ``problem``) or ``listed`` (found, not loaded by this
    process)."""

    kind: str
    name: str
    target: str
    source: str
    status: str
    problem: str = ""


class PluginGroup:
    """The entry points of ``group``, loaded on the first :meth:`load` in name order.

    ``add(obj, name)`` checks the object an entry point names and registers it, returning what the
    registry keeps; it raises (any exception) to refuse it. Without ``add`` the group only lists its
    entry points (a process that does not own the registry). ``builtin`` names the registry's own
    entries (name -> the module or class that defines each), for the listing.
    """

    def __init__(self, group: str, *, kind: str, add: Callable[[object, str], object] | None = None,
                 builtin: dict[str, str] | None = None):
        self.group, self.kind, self._add = group, kind, add
        self.builtin = dict(builtin or {})
        self._records: list[PluginRecord] | None = None
        self._loaded: dict[str, object] = {}
        self._lock = threading.RLock()   # the app's sessions are threads: one loads, the others wait

    def load(self) -> dict[str, object]:
        """Entry-point name -> registered object of every plugin that loaded (loading them on the
        first call; a call from a plugin being loaded sees those loaded so far, a call from another
        thread waits for all)."""
        with self._lock:
            if self._records is None:
                from importlib.metadata import entry_points  # 20 ms: only when plugins are looked for

                self._records = []
                for entry in sorted(entry_points(group=self.group), key=lambda e: (e.name, e.value)):
                    self._records.append(self._load_one(entry))
        return self._loaded

    @property
    def records(self) -> list[PluginRecord]:
        """Every entry point of the group with what became of it."""
        self.load()
        return list(self._records or ())

    @property
    def failures(self) -> list[PluginRecord]:
        return [r for r in self.records if r.status == "failed"]

    def _load_one(self, entry: EntryPoint) -> PluginRecord:
        record = PluginRecord(self.kind, entry.name, entry.value, _source(entry), "listed")
        if self._add is None:
            return record
        try:
            self._loaded[entry.name] = self._add(entry.load(), entry.name)
        except Exception as exc:  # a plugin's own failure must not stop the others
            problem = one_line(f"{type(exc).__name__}: {exc}")
            LOG.warning("%s plugin %s = %s (%s) skipped: %s", self.kind, entry.name, entry.value,
                        record.source, problem)
            return replace(record, status="failed", problem=problem)
        return replace(record, status="loaded")


def _source(entry: EntryPoint) -> str:
    dist = entry.dist
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


def class_target(obj: object) -> str:
    """``module:QualifiedName`` of an object's class, as an entry point names it."""
    return f"{type(obj).__module__}:{type(obj).__qualname__}"


def plugin_listing(groups: list[PluginGroup]) -> tuple[dict, str]:
    """``(result, text)`` of the ``plugins`` commands: each group's built-in entries and entry
    points (loading those a group loads) as JSON-able rows under ``plugins``, the failed ones also
    under ``failed``, and a readable table whose last lines say why each failure failed."""
    records = [PluginRecord(group.kind, name, target, "this project", "built in")
               for group in groups for name, target in group.builtin.items()]
    records += [r for group in groups for r in group.records]
    rows = [asdict(r) for r in records]
    columns = ("kind", "name", "status", "source", "target")
    table = [columns] + [tuple(getattr(r, c) for c in columns) for r in records]
    widths = [max(len(row[k]) for row in table) for k in range(len(columns) - 1)]
    lines = ["  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[-1]]) for row in table]
    lines += [f"{r.kind} plugin {r.name} = {r.target} failed: {r.problem}" for r in records if r.problem]
    return {"plugins": rows, "failed": [row for row in rows if row["status"] == "failed"]}, "\n".join(lines)
