"""Small Streamlit helpers shared by the pages."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from urllib.parse import urlsplit

import streamlit as st

from . import config
from .studytypes import StudyType


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


def time_left(seconds: float) -> str:
    """A plain estimate for the progress line: "under a minute", "4 min", "1 h 05 min"."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def type_view(study_type: StudyType) -> ModuleType:
    """The ``view`` module of a study type's package: ``render_item``, ``response_form``, and
    ``console_section`` where the type has a console tool (``studyapp.studytypes.base``)."""
    return importlib.import_module(f"{type(study_type).__module__}.view")
