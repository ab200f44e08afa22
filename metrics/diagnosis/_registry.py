"""The error registry: which error types a diagnosis uses and in which order (the paper's seven
and the grouped oracles, declared as the project's entry points, then those of installed
packages, loaded on first use, then those added by :func:`register_error_type`)."""

from __future__ import annotations

from metrics.core._plugins import PLUGIN_GROUPS, PluginGroup, describe
from metrics.core._validation import check_choice
from metrics.diagnosis._scene import TRUE_POSITIVE
from metrics.diagnosis.errors import ErrorType, GroupedOracle


class ErrorRegistry:
    """The error types of a diagnosis, in the paper's order (Fig. 5/7), which is also the
    order of the progressive fixes (§3.4); the grouped oracles (§3.3) after them.

    >>> ERROR_REGISTRY.oracles[:3], ERROR_REGISTRY["duplicate"].title
    (('human_box', 'object_box', 'both_boxes'), 'Duplicate')
    """

    def __init__(self, *error_types: ErrorType):
        self._types: list[ErrorType] = []
        self.plugins: PluginGroup | None = None  # the entry points loaded on the first look
        for error_type in error_types:
            self.register(error_type)

    @property
    def _entries(self) -> list[ErrorType]:
        """The error types, those of installed packages loaded on the first look."""
        if self.plugins is not None:
            self.plugins.load()
        return self._types

    def register(self, error_type: ErrorType) -> ErrorType:
        """Add an error type (after the others of its kind); its name must be new."""
        if not error_type.name or error_type.name in self.oracles or error_type.name == TRUE_POSITIVE:
            raise ValueError(f"an error type needs a new name, got {error_type.name!r}")
        self._types.append(error_type)
        self._number_prediction_kinds()
        return error_type

    def unregister(self, name: str) -> None:
        """Remove the error type called ``name``."""
        self._entries.remove(self[name])
        self._number_prediction_kinds()

    def _number_prediction_kinds(self) -> None:
        for error_type in self.prediction_errors:
            error_type.code = self.prediction_kinds.index(error_type.name)

    def __getitem__(self, name: str) -> ErrorType:
        return next(e for e in self._entries if e.name == check_choice("oracles", name, self.oracles))

    @property
    def errors(self) -> tuple[ErrorType, ...]:
        """The error types (single oracles), in the paper's order."""
        return tuple(e for e in self._entries if not isinstance(e, GroupedOracle))

    @property
    def grouped(self) -> tuple[ErrorType, ...]:
        return tuple(e for e in self._entries if isinstance(e, GroupedOracle))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.errors)

    @property
    def oracles(self) -> tuple[str, ...]:
        """Every oracle: the error types, then the grouped oracles."""
        return self.names + tuple(e.name for e in self.grouped)

    @property
    def prediction_errors(self) -> tuple[ErrorType, ...]:
        """The error types of predictions, in the priority of Fig. 2."""
        ranked = sorted((e.priority, k) for k, e in enumerate(self.errors) if e.priority is not None)
        return tuple(self.errors[k] for _priority, k in ranked)

    @property
    def prediction_kinds(self) -> tuple[str, ...]:
        """Prediction categories: code 0 is a true positive, then the prediction error types."""
        return (TRUE_POSITIVE,) + tuple(e.name for e in self.errors if e.priority is not None)

    @property
    def counted(self) -> tuple[ErrorType, ...]:
        """Every type in the order of ``error_counts``: prediction errors, ground-truth errors,
        grouped oracles."""
        return (tuple(e for e in self.errors if e.priority is not None)
                + tuple(e for e in self.errors if e.priority is None) + self.grouped)


def _add_plugin(error_class: object, name: str) -> ErrorType:
    """Register an instance of an entry point's error type class."""
    if not (isinstance(error_class, type) and issubclass(error_class, ErrorType)):
        raise TypeError(f"{describe(error_class)} is not a subclass of metrics.diagnosis.ErrorType")
    return ERROR_REGISTRY.register(error_class())


#: Error types are entry points of ``hoi_semantic_eval.diagnosis_errors`` (``name =
#: "package.module:ErrorClass"``): the paper's seven and the grouped oracles in the project's
#: ``pyproject.toml``, in the paper's order, then those of other packages, on the registry's first use.
ENTRY_POINT_GROUP = PLUGIN_GROUPS["error type"]

#: The registry, filled from the entry points on its first use.
ERROR_REGISTRY = ErrorRegistry()
ERROR_REGISTRY.plugins = PluginGroup(ENTRY_POINT_GROUP, kind="error type", add=_add_plugin,
                                     order=lambda error_class: error_class.rank)
register_error_type = ERROR_REGISTRY.register
