"""How an imSitu item is shown, and its marks (``mark_form``)."""

from __future__ import annotations

import streamlit as st

from metrics import InputError
from studyapp import images
from studyapp.components import mark_form


def render_item(fields: dict) -> None:
    try:
        png = images.render_png(fields["image_root"], fields["image"])
    except InputError:
        png = None
    if png is None:
        st.warning(images.missing_notice(fields["image"]))
    else:
        st.image(png)
    st.markdown("**Which of these verbs correctly describe what is happening in the image?** "
                "Mark every one that does.")


def response_form(fields: dict, current: str | None, **mount) -> None:
    """A mark per prediction (click, or its digit key), then Submit (Enter): ``mark_form``."""
    items = [{"label": verb.replace("_", " ")} for verb in fields["predictions"]]
    mark_form(mode="verbs", items=items,
              current=current if current and len(current) == len(items) else None, **mount)
