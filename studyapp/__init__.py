"""The HOI study platform: Streamlit pages over plain modules (storage, study types, exports)."""
