"""Small Streamlit helpers shared by the pages."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import streamlit as st

from ..core import config


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


def effort(n_items: int, seconds_per_item: float) -> str:
    """The welcome page's estimate in words: "40 items · about 13 min (about 20 seconds an
    item)", "1 item · under a minute (about 1 second an item)"."""
    per_item = max(round(seconds_per_item), 1)
    total = n_items * seconds_per_item
    whole = "under a minute" if round(total / 60) < 1 else f"about {time_left(total)}"
    return (f"**{n_items} item{'' if n_items == 1 else 's'} · {whole}** "
            f"(about {per_item} second{'' if per_item == 1 else 's'} an item)")


def time_left(seconds: float) -> str:
    """A plain estimate for the progress line: "under a minute", "4 min", "1 h 05 min"."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"
