"""The study-type registry.

A study type declares its item fields (``required_fields`` / ``normalize_item``), its default
rating scale and what a valid response is (``parse_response``), how its items are sampled or
generated (``sample_items``, ``attention_items``), what it exports (``export_item``,
``export_tables``) and analyses (``dashboard_sections``, ``report_analyses``); how its items are
shown is its view, which the views layer finds by the type's name (``studyapp.views.studytypes``,
entry-point group ``hoi_semantic_eval.study_views``). A new type is one new package (or, from another
installed package, one module) that subclasses :class:`StudyType`, plus one entry point of group
``hoi_semantic_eval.study_types`` naming the class: the project's own in its ``pyproject.toml``,
another package's in its own (loaded on first use, each on its own: :mod:`metrics.core`'s plugin
loader). :func:`register` adds an instance directly (tests, notebooks).
"""

from __future__ import annotations

from metrics import InputError
from metrics.core import PLUGIN_GROUPS, PluginGroup, describe

from .base import Scale, Section, StudyType

REGISTRY: dict[str, StudyType] = {}


def register(study_type: StudyType) -> StudyType:
    """Make ``study_type`` available to specs, studies and pages under its ``name``."""
    if study_type.name in REGISTRY:
        raise ValueError(f"a study type named {study_type.name!r} is already registered")
    REGISTRY[study_type.name] = study_type
    return study_type


def get_type(name: str) -> StudyType:
    if name not in REGISTRY:
        PLUGINS.get(name)
    try:
        return REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown study type {name!r} (known: {', '.join(REGISTRY)})") from None


def study_types() -> dict[str, StudyType]:
    """Every registered type by name, those of installed packages included."""
    PLUGINS.load()
    return dict(REGISTRY)


def _add_plugin(study_type_class: object, name: str) -> StudyType:
    """Register an instance of an entry point's study type class."""
    if not (isinstance(study_type_class, type) and issubclass(study_type_class, StudyType)):
        raise TypeError(f"{describe(study_type_class)} is not a subclass of studyapp.studytypes.StudyType")
    return register(study_type_class())


#: Study types: the project's own entry points of ``hoi_semantic_eval.study_types``, then other
#: packages' (``name = "package.module:StudyTypeClass"``), registered on first use.
ENTRY_POINT_GROUP = PLUGIN_GROUPS["study type"]
PLUGINS = PluginGroup(ENTRY_POINT_GROUP, kind="study type", add=_add_plugin)

__all__ = ["ENTRY_POINT_GROUP", "PLUGINS", "REGISTRY", "Scale", "Section", "StudyType", "get_type", "register",
           "study_types"]
