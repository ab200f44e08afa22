"""The study-type registry.

A study type declares its item fields (``required_fields`` / ``normalize_item``), its default
rating scale and what a valid response is (``parse_response``), how its items are sampled or
generated (``sample_items``, ``attention_items``), what it exports (``export_item``,
``export_tables``) and analyses (``dashboard_sections``, ``report_analyses``), and how an item
is shown (its ``view``, a :class:`StudyView`). A new type is one new package (or, from another
installed package, one module) that subclasses :class:`StudyType`, plus one entry point of group
``hoi_semantic_eval.study_types`` naming the class: the project's own in its ``pyproject.toml``,
another package's in its own (loaded on first use, each on its own: :mod:`metrics.core`'s plugin
loader). :func:`register` adds an instance directly (tests, notebooks).
"""

from __future__ import annotations

import importlib
import importlib.util

from metrics import InputError
from metrics.core import PLUGIN_GROUPS, PluginGroup, describe

from .base import Scale, Section, StudyType, StudyView

REGISTRY: dict[str, StudyType] = {}
_VIEWS: dict[StudyType, StudyView] = {}


def register(study_type: StudyType) -> StudyType:
    """Make ``study_type`` available to specs, studies and pages under its ``name``; a type whose
    ``view`` is missing or incomplete is refused with the reason."""
    if study_type.name in REGISTRY:
        raise ValueError(f"a study type named {study_type.name!r} is already registered")
    if problem := _view_problem(study_type):
        raise ValueError(f"study type {study_type.name!r} {problem}")
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


def view_of(study_type: StudyType) -> StudyView:
    """The type's :class:`StudyView`, its module imported on the first call (it imports Streamlit)."""
    if study_type not in _VIEWS:
        view = study_type.view
        if isinstance(view, str):
            module, _, attribute = view.partition(":")
            view = getattr(importlib.import_module(module), attribute, None)
        if not isinstance(view, StudyView) or _missing_hooks(study_type, view):
            raise InputError(f"study type {study_type.name!r}: its view {study_type.view!r} is not "
                             f"{_needs(study_type)}")
        _VIEWS[study_type] = view
    return _VIEWS[study_type]


def _hooks(study_type: StudyType) -> list[str]:
    return ["render_item", "item_content"] + (["response_form"] if study_type.custom_response else [])


def _needs(study_type: StudyType) -> str:
    return f"a StudyView ({', '.join(_hooks(study_type))})"


def _missing_hooks(study_type: StudyType, view: StudyView) -> list[str]:
    return [hook for hook in _hooks(study_type) if not callable(getattr(view, hook))]


def _view_problem(study_type: StudyType) -> str:
    """Why the type's declared view cannot show its items ("" when it can, as far as is known
    without importing a view module)."""
    view = study_type.view
    if isinstance(view, StudyView):
        missing = _missing_hooks(study_type, view)
        return f"has a view without {', '.join(missing)}: give {_needs(study_type)}" if missing else ""
    module, colon, attribute = str(view).partition(":")
    if not (colon and module and attribute.isidentifier()):
        return f"declares no view: set view = {_needs(study_type)}, or 'module:ATTRIBUTE' naming one"
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    return "" if found else f"declares view {view!r}, but there is no module {module!r}"


def _add_plugin(study_type_class: object, name: str) -> StudyType:
    """Register an instance of an entry point's study type class."""
    if not (isinstance(study_type_class, type) and issubclass(study_type_class, StudyType)):
        raise TypeError(f"{describe(study_type_class)} is not a subclass of studyapp.studytypes.StudyType")
    return register(study_type_class())


#: Study types: the project's own entry points of ``hoi_semantic_eval.study_types``, then other
#: packages' (``name = "package.module:StudyTypeClass"``), registered on first use.
ENTRY_POINT_GROUP = PLUGIN_GROUPS["study type"]
PLUGINS = PluginGroup(ENTRY_POINT_GROUP, kind="study type", add=_add_plugin)

__all__ = ["ENTRY_POINT_GROUP", "PLUGINS", "REGISTRY", "Scale", "Section", "StudyType", "StudyView",
           "get_type", "register", "study_types", "view_of"]
