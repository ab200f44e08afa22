"""The server's application: the pages (``app.py``) and the answer route (``answer_route``) on
one Streamlit ``st.App``, which ``python -m studyapp serve`` runs (``streamlit run`` finds
``app`` here and serves it with uvicorn)."""

from pathlib import Path

import streamlit as st

from studyapp.views import answer_route

app = st.App(Path(__file__).resolve().with_name("app.py"), middleware=answer_route.middleware())
