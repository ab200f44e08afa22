"""Small Streamlit helpers shared by the pages."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import streamlit as st

from . import config, inert
from .studytypes import Scale


def base_url() -> str:
    """The address the browser used (for links), else the configured one."""
    if os.environ.get("STUDYAPP_BASE_URL"):
        return config.base_url()
    try:
        url = st.context.url
    except Exception:  # no browser context (tests, bare mode)
        url = None
    if url:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}"
    return config.base_url()


def rating_buttons(scale: Scale, key: str, current: str | None = None, on_click=None,
                   args: tuple = (), disabled: bool = False) -> None:
    """One button per scale value, labelled "value — label", with the digit as shortcut."""
    columns = st.columns(len(scale.values))
    for column, value, label in zip(columns, scale.values, scale.labels):
        with column:
            st.button(f"{value} — {inert.text(label)}", key=f"{key}-{value}", shortcut=str(value),
                      type="primary" if current == str(value) else "secondary",
                      on_click=on_click, args=(*args, value), disabled=disabled,
                      width="stretch", wrap=True)


def time_left(seconds: float) -> str:
    """A plain estimate for the progress line: "under a minute", "4 min", "1 h 05 min"."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"
