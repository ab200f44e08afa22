"""The annotator page's item screen as one Streamlit component (``st.components.v2``).

Static HTML/CSS/JS kept in ``assets/`` (no build step, nothing downloaded). ``answer_bar``
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

The files are served by path, never sent with a mount. Streamlit sends a component's inline
``js`` / ``css`` text with every mount, and every run of the page mounts the screen again (new
data), so the components here name their files instead: a component whose asset directory is
declared gets a file name, which the page loads from
``/_stcore/bidi-components/<component>/<file>`` once and caches, and a mount carries only its
data. The scripts are ES modules: ``answer_bar.js`` and ``mark_form.js`` import what they share from ``common.js`` and ``seen.js`` (which imports ``live.js``), and
link their style sheets (``common.css`` and their own) into the page themselves, so nothing is
concatenated or generated. ``page.css`` (Streamlit's own elements on every page) is the style
sheet of :func:`page_style`, which the entry page mounts on every run.

The asset directory is declared to the running server's component manager here, from this
folder, before a component is first defined or mounted (:func:`_declare_assets`). Streamlit's
other way, a ``[tool.streamlit.component]`` table in the package's ``pyproject.toml`` found when
the server starts, does not reach this project: the scan looks for that file through a module
named after the distribution (``hoi_semantic_eval``, which does not exist) or in the
distribution's file list (which an editable install does not have). Declared from here, the
assets are those of the code that runs: an editable install, a wheel (``assets/*`` is package
data) or a checkout on ``sys.path`` alike.
"""

from __future__ import annotations

import base64
import itertools
import secrets
import threading
from pathlib import Path

import streamlit as st
from streamlit.components.v2.get_bidi_component_manager import get_bidi_component_manager
from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest
from streamlit.runtime import Runtime

HERE = Path(__file__).resolve().parent
ASSETS = "assets"                     # the asset directory, relative to HERE
PACKAGE = "studyapp"                  # components are named PACKAGE.NAME
_BOOT = secrets.token_hex(4)
_RUNS = itertools.count(1)
_LOCK = threading.Lock()


def _declare_assets() -> None:
    """Declare ``assets/`` as the asset directory of every component here to the component
    manager of the running server (once per manager: a test's app runs on its own)."""
    manager = get_bidi_component_manager()
    with _LOCK:
        if manager.get_component_asset_root(f"{PACKAGE}.{_Component.names[0]}") is None:
            manager.register_from_manifest(
                ComponentManifest(name=PACKAGE, version="0",
                                  components=[ComponentConfig(name=n, asset_dir=ASSETS)
                                              for n in _Component.names]), HERE)


class _Component:
    """A component whose files are in ``assets/``, defined on its first mount (after its asset
    directory is declared; a module importing this one needs no running server)."""
    names: list[str] = []

    def __init__(self, name: str, *, html: str, js: str | None = None, css: str | None = None):
        self.name, self.html, self.js, self.css = name, html, js, css
        self.mount = None
        _Component.names.append(name)

    def __call__(self, **kwargs):
        if not Runtime.exists():
            # bare mode (a script run outside a server, e.g. a spawned process re-running the
            # main module): there is no page and no component manager to declare the files to
            return None
        _declare_assets()
        if self.mount is None:
            with _LOCK:
                if self.mount is None:
                    self.mount = st.components.v2.component(
                        f"{PACKAGE}.{self.name}", html=self.html, js=self.js, css=self.css,
                        isolate_styles=False)
        return self.mount(**kwargs)


_ANSWER_BAR = _Component("answer_bar", html='<div class="answer-bar" data-state="loading"></div>',
                         js="answer_bar.js")


def answer_bar(*, data: dict, on_action, key: str):
    """Mount the bar for one item (``data``: :func:`answer_bar_data`'s); ``on_action`` runs
    (before the page) when a press arrives."""
    return _ANSWER_BAR(key=key, data=data, on_action_change=on_action)


def answer_bar_data(*, item_id: int, values, labels, current: str | None, can_go_back: bool,
                    revising: bool, seen_nonce: str | None, position: int | None = None,
                    cant_judge: bool = False, comments: bool = False, comment: str | None = None,
                    screen: dict | None = None, hint: str | None = None, min_seen_ms: int = 300,
                    route: dict | None = None) -> dict:
    """The bar's data for one item.

    ``seen_nonce`` is the last press this server session received: a press the browser kept
    while the server was unreachable, and that is not it, is sent again. Every server run
    gives new data (``run``), so the bar is re-mounted, and unlocked, after each one.
    ``position``: the item's place in the sequence (Back goes to the one before it).
    ``cant_judge`` adds a "Can't judge" answer (key X); ``comments`` a comment box whose text
    (``comment`` when revisiting) is sent with the answer. ``screen``: ``{progress: {text,
    fraction}, notices: [(kind, text)], content: [node, ...]}`` drawn above the controls as one
    unit with them; ``hint``: the line naming the keys. ``min_seen_ms``: the seen floor — a press
    before the item has been fully drawn this long, or before every row the answer records
    has been in view, is dropped (``common.js``); each answer says how long the item had been
    drawn (``seen_ms``) and whether all its rows had been in view (``in_view``). ``route``:
    ``{url, annotator, key}`` of the answer route (``studyapp.views.answer_route``), which takes
    the answer and returns the next screen's data without a run of the page.
    """
    return {"item_id": item_id, "position": position, "values": list(values), "labels": list(labels),
            "current": current, "can_go_back": can_go_back, "revising": revising,
            "seen_nonce": seen_nonce, "run": next_run(), "cant_judge": cant_judge,
            "comments": comments, "comment": comment, "screen": screen, "hint": hint,
            "scroll_top": True, "min_seen_ms": min_seen_ms, "route": route}


def next_run() -> str:
    """A value no earlier server run gave, even before a restart of the server."""
    return f"{_BOOT}-{next(_RUNS)}"


_MARK_FORM = _Component("mark_form", html='<div class="mark-form" data-state="loading"></div>',
                        js="mark_form.js")


def mark_form(*, mode: str, items: list[dict], current, classes: list[str] = (), item_id: int,
              can_go_back: bool, revising: bool, seen_nonce: str | None, on_action, key: str,
              position: int | None = None,
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
    ``answer_bar``; ``position`` as in :func:`answer_bar_data`."""
    return _MARK_FORM(key=key, data={"mode": mode, "items": items, "current": current,
                                     "position": position,
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


_PAGE_FOCUS = _Component("page_focus", html='<span class="page-focus"></span>', js="page_focus.js")


def page_focus(text: str, key: str = "page-focus") -> None:
    """A page that replaces the item screen (practice feedback, the end pages): the focus goes to
    its heading and a screen reader hears ``text`` (plain text)."""
    _PAGE_FOCUS(key=key, data={"text": text, "run": next_run()})


_PAGE_STYLE = _Component("page_style", html="", css="page.css")


def page_style() -> None:
    """The page's own style sheet (``page.css``: Streamlit's elements at a readable contrast),
    linked by a component the page mounts on every run: the browser loads the file once, and
    each run sends only the component's name and the file's."""
    _PAGE_STYLE(key="page-style")
