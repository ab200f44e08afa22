"""How an imSitu item is shown, and its marks (``mark_form``)."""

from __future__ import annotations

import io
from functools import lru_cache

import streamlit as st
from PIL import Image

from metrics import InputError
from studyapp.core import images
from studyapp.views.components import image, mark_form, missing_image

from . import StudyView

ANSWER_HELP = ("Click or tap every verb that describes the image, then Submit. “Larger image” "
               "enlarges the picture.")
KEYS_HELP = "Keys: a verb's number marks it, Enter submits, z enlarges the picture."
QUESTION = "Which of these verbs correctly describe what is happening in the image? Mark every one that does."
ZOOMED = 768  # px: the width of "Larger image"


def render_item(fields: dict) -> None:
    try:
        png = images.render_png(fields["image_root"], fields["image"])
    except InputError:
        png = None
    if png is None:
        st.warning(images.missing_notice(fields["image"]))
    else:
        st.image(png)
    st.markdown(f"**{QUESTION.split('?')[0]}?**{QUESTION.split('?')[1]}")


def response_form(fields: dict, current: str | None, **mount) -> None:
    """A mark per prediction (click, or its digit key), then Submit (Enter): ``mark_form``."""
    items = [{"label": verb.replace("_", " ")} for verb in fields["predictions"]]
    png = _png(fields["image_root"], fields["image"])
    width = Image.open(io.BytesIO(png)).width if png else None
    note = (f"enlarged from the {width}-px source, no more detail" if width and width < ZOOMED
            else None)
    mark_form(mode="verbs", items=items, zoom_note=note,
              current=current if current and len(current) == len(items) else None, **mount)


@lru_cache(maxsize=256)
def _png(root: str, path: str) -> bytes | None:
    try:
        return images.render_png(root, path)
    except InputError:
        return None


def item_content(fields: dict) -> list:
    """Item-screen nodes: the image (enlarged by the form's "Larger image") and the question."""
    png = _png(fields["image_root"], fields["image"])
    shown = (image(png, cls="zoomable", alt="the image to judge") if png is not None else
             missing_image(fields["image"]))
    return [["figure", {}, shown], ["p", {}, ["strong", {}, QUESTION.split("?")[0] + "?"],
                                    QUESTION.split("?")[1]]]


VIEW = StudyView(name="imsitu_correctness", render_item=render_item, item_content=item_content,
                 response_form=response_form,
                 answer_help=ANSWER_HELP, keys_help=KEYS_HELP)
