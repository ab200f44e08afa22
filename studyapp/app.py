"""Streamlit entry point: ``streamlit run studyapp/app.py`` (``python -m studyapp serve``).

Two pages: the annotator page at ``/`` (invite links point here) and the researcher console at
``/console``. The navigation is hidden so annotators never see the console link.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import streamlit as st  # noqa: E402

from studyapp.overview import PROJECT_NAME  # noqa: E402

st.set_page_config(page_title=PROJECT_NAME, layout="wide")
VIEWS = Path(__file__).resolve().parent / "views"
page = st.navigation([st.Page(VIEWS / "annotate.py", title="Study", default=True),
                      st.Page(VIEWS / "console.py", title="Console", url_path="console")],
                     position="hidden")
page.run()
