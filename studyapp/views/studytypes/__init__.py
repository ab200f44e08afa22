"""The study types' views: how each type's items are shown, looked up by the type's name.

A view is a :class:`StudyView` (Streamlit code) named as its study type is. Each is an entry point
of group ``hoi_semantic_eval.study_views``, ``name = "package.module:VIEW"``: the project's own in
its ``pyproject.toml`` (one module here per built-in type, defining ``VIEW``), another package's in
its own, loaded on first use, each on its own (:mod:`metrics.core`'s plugin loader, the one the
study types load through). :func:`register_view` adds a view directly (tests, notebooks);
:func:`view_of` gives a type's view, or says in one line that it has none and which exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from metrics import InputError
from metrics.core import PLUGIN_GROUPS, PluginGroup, describe

if TYPE_CHECKING:
    from studyapp.studytypes import StudyType


@dataclass(frozen=True)
class StudyView:
    """How the items of the study type ``name`` are shown, Streamlit code that only the views call.

    ``render_item(fields)`` draws an item with Streamlit (the instructions' example, the console's
    preview); ``item_content(fields)`` gives the annotator's item screen as nodes of
    ``studyapp.views.components`` (plain text, set as text); ``response_form(fields, current, **mount)``
    draws the answer form of a type with ``custom_response`` (mounting ``components.mark_form``
    with the page's ``mount`` arguments); ``console_section()``, where given, is a tool of the type
    on the researcher console; for the welcome page, ``answer_help`` says in plain words how an
    answer is given by click or tap and ``keys_help`` how by keys (touch screens do not show it);
    ``{first}`` and ``{last}`` stand for the scale's ends.
    """

    name: str
    render_item: Callable[[dict], None]
    item_content: Callable[[dict], list]
    response_form: Callable[..., None] | None = None
    console_section: Callable[[], None] | None = None
    answer_help: str = ""
    keys_help: str = ""


#: The hooks every view gives; a type with ``custom_response`` also needs ``response_form``.
HOOKS = ("render_item", "item_content")

VIEWS: dict[str, StudyView] = {}


def register_view(view: object) -> StudyView:
    """Show the items of the study type ``view.name`` with ``view``; a view that is not a
    :class:`StudyView`, lacks a hook or whose type already has one is refused with the reason."""
    if not isinstance(view, StudyView):
        raise TypeError(f"{describe(view)} is not a studyapp.views.studytypes.StudyView")
    if view.name in VIEWS:
        raise ValueError(f"a view of study type {view.name!r} is already registered")
    if missing := [hook for hook in HOOKS if not callable(getattr(view, hook))]:
        raise ValueError(f"the view of study type {view.name!r} has no {', '.join(missing)}: "
                         f"give a StudyView with {', '.join(HOOKS)}")
    VIEWS[view.name] = view
    return view


def view_of(study_type: StudyType) -> StudyView:
    """The view of ``study_type`` (a built-in's module imported on the first call; it imports
    Streamlit); InputError in one line when the type has none or its view cannot answer it."""
    name = study_type.name
    if name not in VIEWS:
        PLUGINS.get(name)
    view = VIEWS.get(name)
    if view is None:
        raise InputError(f"study type {name!r} has no view (views: {', '.join(sorted(VIEWS)) or 'none'}); "
                         f"declare its StudyView as an entry point of {ENTRY_POINT_GROUP}")
    if study_type.custom_response and not callable(view.response_form):
        raise InputError(f"study type {name!r} takes its answers from its view's response_form "
                         "(custom_response), but its view has none")
    return view


#: Views: the project's own entry points of ``hoi_semantic_eval.study_views``, then other
#: packages' (``name = "package.module:VIEW"``), registered on first use.
ENTRY_POINT_GROUP = PLUGIN_GROUPS["study view"]
PLUGINS = PluginGroup(ENTRY_POINT_GROUP, kind="study view", add=lambda view, _name: register_view(view))

__all__ = ["ENTRY_POINT_GROUP", "HOOKS", "PLUGINS", "VIEWS", "StudyView", "register_view", "view_of"]
