"""The annotator page's item screen as one Streamlit component (``st.components.v2``).

Static HTML/CSS/JS kept in this folder (no build step, nothing downloaded). ``answer_bar``
renders a button per scale value plus Back / Continue, handles the keys in the browser, locks
itself with a visible "saving…" on the first press and returns ``{item_id, kind, value, comment,
nonce, not_applied, seen_ms, in_view}``: the answer names the item it was given for. ``mark_form`` does the same
for the types whose answer is a set of marks (imSitu verb correctness, CrossHOI curation).

Either draws the whole item screen when given ``screen``: the progress line, the
notices, and the item's content as nodes (:func:`image`, and ``[tag, attributes, *children]``
lists of plain text, see ``common.js``) arrive in the same data as the controls, and the new
screen replaces the old one in one step, once its images are decoded, with its controls live
from then on. Mounted under one key for the whole page, the component keeps the old screen
(locked, "saving…") until the new one is in place.
"""

from __future__ import annotations

import base64
import itertools
import secrets
from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent
_BOOT = secrets.token_hex(4)
_RUNS = itertools.count(1)


def _component(name: str, css_class: str):
    """A component from ``NAME.js`` / ``NAME.css``, each after the shared ``common`` file (and
    for the script ``live.js`` before it, ``seen.js``, the seen floor, after it)."""
    def source(suffix: str) -> str:
        shared = ["common.css"] if suffix == "css" else ["live.js", "common.js", "seen.js"]
        return "".join((HERE / f).read_text() for f in [*shared, f"{name}.{suffix}"])
    return st.components.v2.component(
        f"studyapp.{name}", html=f'<div class="{css_class}" data-state="loading"></div>',
        css=source("css"), js=source("js"), isolate_styles=False)


_ANSWER_BAR = _component("answer_bar", "answer-bar")


def answer_bar(*, item_id: int, values, labels, current: str | None, can_go_back: bool,
               revising: bool, seen_nonce: str | None, on_action, key: str,
               cant_judge: bool = False, comments: bool = False, comment: str | None = None,
               screen: dict | None = None, hint: str | None = None, min_seen_ms: int = 300):
    """Mount the bar for one item; ``on_action`` runs (before the page) when a press arrives.

    ``seen_nonce`` is the last press this server session received: a press the browser kept
    while the server was unreachable, and that is not it, is sent again. Every server run
    gives new data (``run``), so the bar is re-mounted, and unlocked, after each one.
    ``cant_judge`` adds a "Can't judge" answer (key X); ``comments`` a comment box whose text
    (``comment`` when revisiting) is sent with the answer. ``screen``: ``{progress: {text,
    fraction}, notices: [(kind, text)], content: [node, ...]}`` drawn above the controls as one
    unit with them; ``hint``: the line naming the keys. ``min_seen_ms``: the seen floor — a press
    before the item has been fully drawn this long, or before every row the answer records
    has been in view, is dropped (``common.js``); each answer says how long the item had been
    drawn (``seen_ms``) and whether all its rows had been in view (``in_view``).
    """
    return _ANSWER_BAR(key=key, data={"item_id": item_id, "values": list(values),
                                      "labels": list(labels), "current": current,
                                      "can_go_back": can_go_back, "revising": revising,
                                      "seen_nonce": seen_nonce, "run": next_run(),
                                      "cant_judge": cant_judge, "comments": comments,
                                      "comment": comment, "screen": screen, "hint": hint,
                                      "scroll_top": True, "min_seen_ms": min_seen_ms},
                       on_action_change=on_action)


def next_run() -> str:
    """A value no earlier server run gave, even before a restart of the server."""
    return f"{_BOOT}-{next(_RUNS)}"


_MARK_FORM = _component("mark_form", "mark-form")


def mark_form(*, mode: str, items: list[dict], current, classes: list[str] = (), item_id: int,
              can_go_back: bool, revising: bool, seen_nonce: str | None, on_action, key: str,
              cant_judge: bool = False, cant_judge_chosen: bool = False, comments: bool = False,
              comment: str | None = None, screen: dict | None = None,
              zoom_note: str | None = None, min_seen_ms: int = 300):
    """Mount the mark form for one item (``mode``: "verbs" or "candidates"; ``items``: one
    ``{label, note}`` per row; ``classes``: the actions the candidate pickers offer). Like
    ``answer_bar``, ``on_action`` gets ``{item_id, kind, value, comment, nonce}``; the value is
    the string of 0/1 marks ("verbs"), ``{marks, plus, minus}`` ("candidates") or "cant_judge".
    ``cant_judge`` / ``comments`` as in ``answer_bar``; ``cant_judge_chosen``: the answer being
    revised was "can't judge". ``screen`` as in ``answer_bar``; ``zoom_note``: said on the
    "Larger image" button (e.g. that the source is enlarged, not sharper). ``min_seen_ms`` as in
    ``answer_bar``."""
    return _MARK_FORM(key=key, data={"mode": mode, "items": items, "current": current,
                                     "classes": list(classes), "item_id": item_id,
                                     "can_go_back": can_go_back, "revising": revising,
                                     "seen_nonce": seen_nonce, "run": next_run(),
                                     "scroll_top": True, "cant_judge": cant_judge,
                                     "cant_judge_chosen": cant_judge_chosen,
                                     "comments": comments, "comment": comment,
                                     "screen": screen, "zoom_note": zoom_note,
                                     "min_seen_ms": min_seen_ms},
                      on_action_change=on_action)


def image(png: bytes, *, cls: str = "", alt: str = "", width: int | None = None) -> list:
    """An image node of the item screen: the PNG inline (a ``data:`` URL, decoded by the page
    before the screen is shown, so image and controls appear together)."""
    attrs = {"src": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
             "class": cls, "alt": alt}
    if width:
        attrs["width"] = int(width)
    return ["img", attrs]


def missing_image(relative: str) -> list:
    """The notice node for an item whose image is missing or unreadable (plain text, as
    ``studyapp.core.images.missing_notice`` says it in Markdown)."""
    return ["p", {"class": "warning"}, f"The image for this item ({relative}) is not available. "
            "Please answer from the text, and tell the researcher if this keeps happening."]


_PAGE_FOCUS = st.components.v2.component(
    "studyapp.page_focus", html='<span class="page-focus"></span>', isolate_styles=False,
    js=(HERE / "live.js").read_text() + (HERE / "page_focus.js").read_text())


def page_focus(text: str, key: str = "page-focus") -> None:
    """A page that replaces the item screen (practice feedback, the end pages): the focus goes to
    its heading and a screen reader hears ``text`` (plain text)."""
    _PAGE_FOCUS(key=key, data={"text": text, "run": next_run()})
