"""The views: the pages, the entry page, the Streamlit helpers and the server process (only
these and each study type's ``view`` module import Streamlit)."""
