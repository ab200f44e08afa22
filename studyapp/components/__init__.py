"""The annotator page's answer controls as one Streamlit component (``st.components.v2``).

Static HTML/CSS/JS kept in this folder (no build step, nothing downloaded). ``answer_bar``
renders a button per scale value plus Back / Continue, handles the keys in the browser, locks
itself with a visible "saving…" on the first press and returns ``{item_id, kind, value, nonce}``:
the answer names the item it was given for. ``mark_form`` does the same for the types whose
answer is a set of marks (imSitu verb correctness, CrossHOI curation).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent
_ANSWER_BAR = st.components.v2.component(
    "studyapp.answer_bar", html='<div class="answer-bar" data-state="ready"></div>',
    css=(HERE / "answer_bar.css").read_text(), js=(HERE / "answer_bar.js").read_text(),
    isolate_styles=False)


def answer_bar(*, item_id: int, values, labels, current: str | None, can_go_back: bool,
               revising: bool, run: int, on_action, key: str):
    """Mount the bar for one item; ``on_action`` runs (before the page) when a press arrives."""
    return _ANSWER_BAR(key=key, data={"item_id": item_id, "values": list(values),
                                      "labels": list(labels), "current": current,
                                      "can_go_back": can_go_back, "revising": revising,
                                      "run": run, "scroll_top": True},
                       on_action_change=on_action)


_MARK_FORM = st.components.v2.component(
    "studyapp.mark_form", html='<div class="mark-form" data-state="ready"></div>',
    css=(HERE / "mark_form.css").read_text(), js=(HERE / "mark_form.js").read_text(),
    isolate_styles=False)


def mark_form(*, mode: str, items: list[dict], current, classes: list[str] = (), item_id: int,
              can_go_back: bool, revising: bool, run: int, on_action, key: str):
    """Mount the mark form for one item (``mode``: "verbs" or "candidates"; ``items``: one
    ``{label, note}`` per row; ``classes``: the actions the candidate pickers offer). Like
    ``answer_bar``, ``on_action`` gets ``{item_id, kind, value, nonce}``; the value is the string
    of 0/1 marks ("verbs") or ``{marks, plus, minus}`` ("candidates")."""
    return _MARK_FORM(key=key, data={"mode": mode, "items": items, "current": current,
                                     "classes": list(classes), "item_id": item_id,
                                     "can_go_back": can_go_back, "revising": revising,
                                     "run": run, "scroll_top": True},
                      on_action_change=on_action)
