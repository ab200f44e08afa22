"""Plugins: entry points of four groups, the project's own (its built-ins, declared in its
``pyproject.toml`` like anyone else's) and those of other installed packages, loaded on first use,
each on its own, so a broken one is skipped with one line naming its entry point while the
others load.

The four registries of the project each hold one :class:`PluginGroup`: datasets
(:mod:`metrics.datasets`), Diag-HOI error types (:mod:`metrics.diagnosis`), study types
(``studyapp.studytypes``) and the study types' views (``studyapp.views.studytypes``). A group's ``add`` checks a loaded object and registers it; whatever an
entry point raises while it is imported or added (a missing dependency, a wrong class, a name
already taken, an entry point named otherwise than its object) is logged once, as one warning
line on the ``metrics.plugins`` logger, and kept in :attr:`PluginGroup.records`, which
``python -m metrics plugins`` and ``python -m studyapp plugins`` list (and then exit 1).

Two settings, as environment variables:

- ``HOI_PLUGINS_AUTOLOAD=0`` loads the project's own entry points and the required ones only;
  other packages' are listed, not loaded.
- ``HOI_PLUGINS_REQUIRE`` names plugins that must load, comma-separated, each as
  ``<group>:<name>`` with the group's last part (``datasets:toy``, ``study_types:warmth``,
  ``diagnosis_errors:glare``); a command that loads the group fails in one line if one does not.

>>> group = PluginGroup(PLUGIN_GROUPS["dataset"], kind="dataset", add=lambda obj, name: obj)
>>> list(group.load())[:3], group.records[0].status
(['hico-det', 'swig-hoi', 'vcoco'], 'built in')
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from metrics.core._constraints import Text, validate_params
from metrics.core._errors import InputError, one_line

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

#: The distribution whose entry points are the built-ins.
PROJECT = "hoi-semantic-eval"
#: The entry-point group of each kind of plugin (``[project.entry-points."<group>"]``).
PLUGIN_GROUPS = {
    "dataset": "hoi_semantic_eval.datasets",
    "error type": "hoi_semantic_eval.diagnosis_errors",
    "study type": "hoi_semantic_eval.study_types",
    "study view": "hoi_semantic_eval.study_views",
}
AUTOLOAD = "HOI_PLUGINS_AUTOLOAD"
REQUIRE = "HOI_PLUGINS_REQUIRE"
BUILT_IN = "this project"

LOG = logging.getLogger("metrics.plugins")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][^\\/\s'\"<>(),]+)+[\\/]([^\\/\s'\"<>(),]+)")


@dataclass(frozen=True)
class PluginRecord:
    """One entry point: its kind, name, target (``package.module:attribute``), the distribution
    that declares it (``name version``, or ``this project``), and what became of it: ``built in``
    (the project's own, loaded), ``loaded``, ``failed`` (with the one-line ``problem``) or
    ``listed`` (found, not loaded by this process)."""

    kind: str
    name: str
    target: str
    source: str
    status: str
    problem: str = ""


def required_plugins(group: str) -> set[str]:
    """The names ``HOI_PLUGINS_REQUIRE`` requires of ``group``."""
    short = group.rpartition(".")[2]
    wanted = (part.strip() for part in os.environ.get(REQUIRE, "").split(","))
    return {name for part in wanted for g, _, name in [part.partition(":")] if g == short and name}


def autoload() -> bool:
    """Whether other packages' entry points load (``HOI_PLUGINS_AUTOLOAD`` is not ``0``)."""
    return os.environ.get(AUTOLOAD, "1").strip() != "0"


class PluginGroup:
    """The entry points of ``group``: the project's own first, sorted by ``order(object)`` (else by
    name), then other packages' in name order, loaded on the first :meth:`load`.

    ``add(obj, name)`` checks the object an entry point names and registers it, returning what the
    registry keeps; it raises (any exception) to refuse it. An object with a ``name`` of its own
    (a dataset, an error type or study type class, a study view) must be named as its entry point is. Without ``add`` the group only lists its entry points (a process that does not
    own the registry).
    """

    @validate_params({"kind": Text()})
    def __init__(self, group: str, *, kind: str, add: Callable[[object, str], object] | None = None,
                 order: Callable[[Any], Any] | None = None):
        self.group, self.kind, self._add, self._order = group, kind, add, order
        self._records: list[PluginRecord] | None = None
        self._own: list[PluginRecord] | None = None
        self._own_loaded: dict[str, PluginRecord] = {}   # built-ins loaded one by one (:meth:`get`)
        self._loaded: dict[str, object] = {}
        self._lock = threading.RLock()   # the app's sessions are threads: one loads, the others wait

    def get(self, name: str) -> object | None:
        """The registered object of ``name``: a built-in is loaded alone (its module only), any
        other name loads the whole group first; None when nothing of that name loaded."""
        with self._lock:
            if name not in self._loaded and self._own is None and name not in self._own_loaded:
                entry = next((e for e in _own_entry_points(self.group) if e.name == name), None)
                if entry is not None:
                    self._own_loaded[name] = self._load_one(entry, own=True)
            if name not in self._loaded and name not in self._own_loaded:
                self.load()
            return self._loaded.get(name)

    def builtin(self) -> dict[str, object]:
        """Name -> registered object of the project's own entry points (loaded on the first call;
        only this project's metadata is read)."""
        with self._lock:
            if self._own is None:
                self._own = []   # a registry asked while its own entries load sees those loaded so far
                entries = sorted(_own_entry_points(self.group), key=lambda e: e.name)
                if (order := self._order) is not None and self._add is not None:
                    entries.sort(key=lambda e: order(e.load()))
                for entry in entries:
                    self._own.append(self._own_loaded.get(entry.name) or self._load_one(entry, own=True))
            return {r.name: self._loaded[r.name] for r in self._own if r.name in self._loaded}

    def load(self) -> dict[str, object]:
        """Entry-point name -> registered object of every plugin that loaded, the project's own
        first (loading them on the first call; a call from a plugin being loaded sees those loaded
        so far, a call from another thread waits for all). Raises :class:`InputError` when a plugin
        ``HOI_PLUGINS_REQUIRE`` names did not load."""
        with self._lock:
            if self._records is None:
                self._records = []
                self.builtin()
                from importlib.metadata import entry_points  # 20 ms: only when plugins are looked for

                required, everyone = required_plugins(self.group), autoload()
                self._records.extend(self._own or ())
                for entry in sorted(entry_points(group=self.group), key=lambda e: (e.name, e.value)):
                    if _source(entry) != BUILT_IN:
                        self._records.append(self._load_one(entry, listed=not (everyone or entry.name in required)))
                order = [r.name for r in self._records if r.name in self._loaded]
                self._loaded = {name: self._loaded[name] for name in order} | self._loaded
                self._check_required(required)
        return self._loaded

    def _check_required(self, required: set[str]) -> None:
        if self._add is None:   # a listing-only group loads nothing
            return
        loaded = {r.name for r in self._records or () if r.status in ("loaded", "built in")}
        if missing := sorted(required - loaded):
            found = {r.name: r for r in self._records or ()}
            why = "; ".join(f"{name}: {found[name].problem}" if name in found else f"{name}: not installed"
                            for name in missing)
            raise InputError(f"{REQUIRE}: required {self.kind} plugin{'s' * (len(missing) > 1)} did not load ({why})")

    @property
    def records(self) -> list[PluginRecord]:
        """Every entry point of the group with what became of it."""
        self.load()
        return list(self._records or ())

    @property
    def failures(self) -> list[PluginRecord]:
        return [r for r in self.records if r.status == "failed"]

    def _load_one(self, entry: EntryPoint, *, own: bool = False, listed: bool = False) -> PluginRecord:
        record = PluginRecord(self.kind, entry.name, entry.value, BUILT_IN if own else _source(entry), "listed")
        if self._add is None or listed:
            return record
        try:
            if not own and entry.name in {r.name for r in self._own or ()}:
                raise ValueError(f"{entry.name!r} is a built-in {self.kind} of this project")
            loaded = entry.load()
            if isinstance(own_name := getattr(loaded, "name", entry.name), str) and own_name != entry.name:
                raise ValueError(f"the entry point is named {entry.name!r} but its {self.kind} is named "
                                 f"{own_name!r}; name the entry point {own_name!r}")
            self._loaded[entry.name] = self._add(loaded, entry.name)
        except Exception as exc:  # a plugin's own failure must not stop the others
            problem = without_paths(one_line(f"{type(exc).__name__}: {exc}"))
            LOG.warning("%s plugin %s = %s (%s) skipped: %s", self.kind, entry.name, entry.value,
                        record.source, problem)
            return replace(record, status="failed", problem=problem)
        return replace(record, status="built in" if own else "loaded")


def _own_entry_points(group: str) -> list[EntryPoint]:
    """The project's own entry points of ``group``, in declaration order."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return list(distribution(PROJECT).entry_points.select(group=group))
    except PackageNotFoundError:
        raise InputError(f"the {PROJECT} distribution is not installed, so its built-in plugins are unknown; "
                         "run ./scripts/setup.sh (or pip install .)") from None


def _source(entry: EntryPoint) -> str:
    dist = entry.dist
    if dist is not None and dist.name == PROJECT:
        return BUILT_IN
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


def without_paths(text: str) -> str:
    """``text`` with each absolute file path shortened to its last part (a repr of a module names
    the file it came from).

    >>> without_paths("<module 'toy' from '/home/me/site-packages/toy.py'> is not a class")
    "<module 'toy' from 'toy.py'> is not a class"
    """
    return _PATH.sub(r"\1", text)


def describe(obj: object) -> str:
    """A short name for what an entry point gave (``module:Name`` or its type), never a repr."""
    name = getattr(obj, "__qualname__", None)
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", None)
    return f"{module}:{name}" if name and module else f"a {type(obj).__name__}"


def plugin_listing(groups: list[PluginGroup]) -> tuple[dict, str]:
    """``(result, text)`` of the ``plugins`` commands: each group's entry points, the project's own
    and other packages' (loading those a group loads), as JSON-able rows under ``plugins``, the
    failed ones also under ``failed``, and a readable table whose last lines say why each failure
    failed. A failure is reported here and not logged again."""
    level = LOG.level
    LOG.setLevel(logging.ERROR)
    try:
        records = [r for group in groups for r in _records_of(group)]
    finally:
        LOG.setLevel(level)
    rows = [asdict(r) for r in records]
    columns = ("kind", "name", "status", "source", "target")
    table = [columns] + [tuple(getattr(r, c) for c in columns) for r in records]
    widths = [max(len(row[k]) for row in table) for k in range(len(columns) - 1)]
    lines = ["  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[-1]]) for row in table]
    lines += [f"{r.kind} plugin {r.name} = {r.target} failed: {r.problem}" for r in records if r.problem]
    return {"plugins": rows, "failed": [row for row in rows if row["status"] == "failed"]}, "\n".join(lines)


def _records_of(group: PluginGroup) -> list[PluginRecord]:
    """The group's records; a required plugin that did not load is listed, not raised."""
    try:
        return group.records
    except InputError:
        return list(group._records or ())


def listing_exit_code(result: dict) -> int:
    """The ``plugins`` commands' exit status: 1 when a plugin failed to load, else 0."""
    return 1 if result["failed"] else 0
