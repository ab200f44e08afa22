"""How a pair is shown with its image."""

from __future__ import annotations

import streamlit as st

from metrics import InputError
from studyapp import images

from ..hoi_similarity import view as pair_view

IMAGE_HEIGHT = 300  # px: image, pair and answer buttons fit in one 1280 x 800 screen


def render_item(fields: dict) -> None:
    """The image (boxes can be hidden) beside the pair."""
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
        pair_view.render_item(fields)
