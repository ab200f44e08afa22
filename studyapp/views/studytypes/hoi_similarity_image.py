"""How a pair is shown with its image."""

from __future__ import annotations

from functools import lru_cache

import streamlit as st

from metrics import InputError
from studyapp.core import images
from studyapp.views.components import image, missing_image

from . import StudyView
from . import hoi_similarity as pair_view

ANSWER_HELP = ("Click or tap the answer that fits. Your earlier rating of the pair (without the "
               "image) is marked: choose it again to keep it, or another to change it. The next item "
               "follows at once.")
KEYS_HELP = "Keys: an answer's number ({first}–{last}) gives it; Enter keeps the marked one."
IMAGE_HEIGHT = 300  # px: image, pair and answer buttons fit in one 1280 x 800 screen


def render_item(fields: dict, *, synset_codes: bool = True) -> None:
    """The image (boxes can be hidden) beside the pair (``synset_codes`` as in the pair's view)."""
    boxes = [(role, fields[f"{role}_box"]) for role in ("human", "object") if fields.get(f"{role}_box")]
    image_column, pair_column = st.columns(2)
    with image_column:
        if boxes and not st.toggle("Show the boxes", value=True, key="show-boxes",
                                   help="Hide them to see what they cover"):
            boxes = []
        try:
            png = images.render_png(fields["image_root"], fields["image"], boxes)
        except InputError:
            png = None
        if png is None:
            st.warning(images.missing_notice(fields["image"]))
        else:
            st.image(png, caption="An image of the ground-truth interaction",
                     width=images.width_for_height(png, IMAGE_HEIGHT))
    with pair_column:
        pair_view.render_item(fields, synset_codes=synset_codes)


@lru_cache(maxsize=256)
def _png(root: str, path: str, boxes: tuple) -> bytes | None:
    try:
        return images.render_png(root, path, [(role, list(box)) for role, box in boxes])
    except InputError:
        return None


def item_content(fields: dict, *, synset_codes: bool = True) -> list:
    """Item-screen nodes: the image with and without its boxes (a switch shows one, and the
    choice holds for the next items) beside the pair (``synset_codes`` as in the pair's view)."""
    boxes = tuple((role, tuple(fields[f"{role}_box"])) for role in ("human", "object")
                  if fields.get(f"{role}_box"))
    png = _png(fields["image_root"], fields["image"], boxes)
    if png is None:
        side = ["div", {"class": "image-side"}, missing_image(fields["image"])]
    else:
        width = images.width_for_height(png, IMAGE_HEIGHT)
        shown = [image(png, cls="with-boxes", alt="the image with its boxes", width=width)]
        if boxes:
            bare = _png(fields["image_root"], fields["image"], ())
            shown = [["boxes-toggle", {}]] + shown + [
                image(bare, cls="without-boxes", alt="the image without boxes", width=width)]
        side = ["div", {"class": "image-side"}, *shown,
                ["figcaption", {}, "An image of the ground-truth interaction"]]
    return [["div", {"class": "with-image"}, side,
             *pair_view.item_content(fields, synset_codes=synset_codes)]]


VIEW = StudyView(name="hoi_similarity_image", render_item=render_item, item_content=item_content,
                 answer_help=ANSWER_HELP, keys_help=KEYS_HELP)
