"""Streamlit entry point: ``streamlit run studyapp/views/app.py`` (``python -m studyapp serve``).

Two pages: the annotator page at ``/`` (invite links point here) and the researcher console at
``/console``. The navigation is hidden so annotators never see the console link.
"""

from pathlib import Path

import streamlit as st

from studyapp.platform.reporting.overview import PROJECT_NAME
from studyapp.views.components import page_style

st.set_page_config(page_title=PROJECT_NAME, layout="wide")
HERE = Path(__file__).resolve().parents[1]
VIEWS = HERE / "views"
page_style()  # contrast fixes (components/assets/page.css), loaded by the browser once
page = st.navigation([st.Page(VIEWS / "annotate.py", title="Study", default=True),
                      st.Page(VIEWS / "console" / "console.py", title="Console", url_path="console")],
                     position="hidden")
page.run()
