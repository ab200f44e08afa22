"""The item screen's data: what the answer component draws for one item, built from the
annotator's session and the item (``assignment.Task``) alone, so that the page's run and the
answer route (``studyapp.views.answer_route``) give the same screen for the same item.
"""

from __future__ import annotations

import inspect

from studyapp.core.models import CANT_JUDGE
from studyapp.platform import assignment
from studyapp.studytypes import get_type
from studyapp.views.components import answer_bar_data
from studyapp.views.studytypes import view_of
from studyapp.views.ui import time_left


def progress(task: assignment.Task, answered: int) -> dict:
    """The progress line and bar: which item this is, and how many are left from the answers
    given (``answered``; an item revisited after going back is already one of them)."""
    left = max(task.total - answered, 0)
    if task.response is None:
        text = f"Item {task.number} of {task.total} · {left} left"
    else:
        text = f"Revising item {task.number} of {task.total} · {answered} answered · {left} left"
    if task.seconds_per_item is not None and left:
        seconds = left * task.seconds_per_item
        text += " · " + ("under a minute to go" if seconds < 60 else f"about {time_left(seconds)} to go")
    return {"text": text, "fraction": min(answered / task.total, 1.0) if task.total else 1.0}


def in_words(info: assignment.AnnotatorSession, fields: dict, value: str) -> str:
    """An answer as the annotator reads it ("can't judge", "2 — related but …", marks)."""
    if value == CANT_JUDGE:
        return "can't judge"
    return get_type(info.study_type).describe_response(fields, value, info.spec.scale)


def display_options(info: assignment.AnnotatorSession) -> dict:
    """The spec's ``[display]`` options for a view that shows synset codes (the pair types)."""
    view = view_of(get_type(info.study_type))
    takes = "synset_codes" in inspect.signature(view.item_content).parameters
    return {"synset_codes": info.spec.synset_codes} if takes else {}


def item_screen(info: assignment.AnnotatorSession, task: assignment.Task, answered: int,
                flash: str | None = None) -> dict:
    """Everything the item screen shows besides its controls, as one payload: the progress,
    the notices (practice, ``flash``, the answer being revised, a preselected answer;
    ``(kind, text)`` or ``(kind, text, what the keys do)``, the keys hidden on touch screens)
    and the item's content (``view.item_content``). Plain text: the page sets it as text.
    For a rating scale, ``current`` is the answer the bar marks (the one revised, or a
    preselected earlier rating)."""
    study_type = get_type(info.study_type)
    notices = []
    if task.phase == "practice":
        notices.append(("info", "Practice item: after your answer you will see the expected one."))
    if flash:
        notices.append(("error", flash))
    if task.response is not None:
        notices.append(("info", f"Revising an earlier answer (you gave "
                                f"{in_words(info, task.fields, task.response)}). "
                                "Change it, or continue where you stopped."))
    current = task.response
    if not study_type.custom_response and current is None and (
            current := study_type.preselect(task.fields, info.pseudonym)) is not None:
        notices.append(("info", f"Your earlier rating (without the image): {current}. "
                                "Choose it again to keep it, or choose another.",
                        "Enter (or its key) keeps it."))
    return {"progress": progress(task, answered), "notices": notices,
            "content": view_of(study_type).item_content(task.fields, **display_options(info)),
            "current": current}


def mount_options(info: assignment.AnnotatorSession, task: assignment.Task, screen: dict,
                  seen_nonce: str | None) -> dict:
    """What the answer component of any study type gets for ``task`` besides its own controls."""
    return dict(item_id=task.assignment_id, position=task.position, can_go_back=task.number > 1,
                revising=task.response is not None, seen_nonce=seen_nonce,
                cant_judge=info.spec.cant_judge, comments=info.spec.comments, comment=task.comment,
                screen=screen, min_seen_ms=info.spec.min_seen_ms)


def scale_hint(info: assignment.AnnotatorSession, task: assignment.Task) -> str:
    """The line naming the answer bar's keys."""
    scale = info.spec.scale
    return (f"Keys: {min(scale.values)}–{max(scale.values)} answer"
            + (" · X can't judge" if info.spec.cant_judge else "") + " · Backspace goes back"
            + (" · Enter continues where you stopped" if task.response is not None else ""))


def bar_data(info: assignment.AnnotatorSession, task: assignment.Task, answered: int, *,
             seen_nonce: str | None, flash: str | None = None, route: dict | None = None) -> dict:
    """The answer bar's data for ``task`` of a study type answered on its scale; ``route``: the
    answer route's address and key, when this screen's answer may go there."""
    screen = item_screen(info, task, answered, flash)
    current = screen.pop("current")
    scale = info.spec.scale
    return answer_bar_data(values=scale.values, labels=scale.labels, current=current,
                           hint=scale_hint(info, task), route=route,
                           **mount_options(info, task, screen, seen_nonce))
