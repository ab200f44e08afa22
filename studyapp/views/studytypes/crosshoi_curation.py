"""How a CrossHOI question is shown, and its answer form (``mark_form``)."""

from __future__ import annotations

import json
from functools import lru_cache

import streamlit as st

from metrics import InputError, hico
from studyapp.core import images, safe_markdown
from studyapp.studytypes.crosshoi_curation import crosshoi
from studyapp.views.components import image, mark_form, missing_image

from . import StudyView

ANSWER_HELP = ("For each suggested action, click or tap correct, incorrect or ambiguous. "
               "Then Submit.")
KEYS_HELP = "Keys: choose an action with its number (or ↑ ↓) and press c, i or a; Enter submits."


def render_item(fields: dict) -> None:
    q = fields["question"]
    try:
        png = images.render_png(fields["image_root"], fields["image"], q.get("boxes") or None)
    except InputError:
        png = None
    if png is None:
        st.warning(images.missing_notice(fields["image"]))
    else:
        st.image(png, caption="Blue: the person asked about" +
                 ("; orange: the object" if "object" in (q.get("boxes") or {}) else ""))
    st.markdown("**Correct for this person (ground truth):** " +
                (", ".join(safe_markdown.code(crosshoi.phrase(p)) for p in q["positives"]) or "none"))


def response_form(fields: dict, current: str | None, **mount) -> None:
    """Correct / incorrect / ambiguous for every candidate (none preselected) and two pickers
    of actions to add, keyed in the browser: ``mark_form``."""
    q = fields["question"]
    items = [{"label": crosshoi.phrase(c), "note": "similar to a correct action"
              if q["flags"].get(c) == "near_synonym" else ""} for c in q["candidates"]]
    if current:
        marks, plus, minus = crosshoi.decode_response(current)
        current = {"marks": marks, "plus": plus, "minus": minus}
    table = hico().classes
    mark_form(mode="candidates", items=items, current=current,
              classes=[crosshoi.phrase(crosshoi.option(v, o)) for v, o in zip(table["verb"], table["object"])],
              **mount)


@lru_cache(maxsize=256)
def _png(root: str, path: str, boxes: str) -> bytes | None:
    try:
        return images.render_png(root, path, json.loads(boxes) or None)
    except InputError:
        return None


def item_content(fields: dict) -> list:
    """Item-screen nodes: the image with the person's (and object's) box, and the ground truth."""
    q = fields["question"]
    png = _png(fields["image_root"], fields["image"], json.dumps(q.get("boxes") or {}))
    if png is None:
        shown = missing_image(fields["image"])
    else:
        caption = "Blue: the person asked about" + ("; orange: the object" if "object" in (q.get("boxes") or {}) else "")
        shown = ["figure", {}, image(png, alt="the image of the question"), ["figcaption", {}, caption]]
    truth = []
    for k, p in enumerate(q["positives"]):
        truth += ([", "] if k else []) + [["code", {}, crosshoi.phrase(p)]]
    return [shown, ["p", {}, ["strong", {}, "Correct for this person (ground truth): "],
                    *(truth or ["none"])]]


VIEW = StudyView(name="crosshoi_curation", render_item=render_item, item_content=item_content,
                 response_form=response_form,
                 answer_help=ANSWER_HELP, keys_help=KEYS_HELP)
