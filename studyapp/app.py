"""Streamlit entry point: ``streamlit run studyapp/app.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import streamlit as st  # noqa: E402

from studyapp.overview import platform_summary  # noqa: E402

summary = platform_summary()
st.set_page_config(page_title=summary["project"], layout="wide")
st.title(summary["project"])
st.caption("Human studies behind the semantic evaluation of human–object interaction detectors.")

vocab = summary["vocabulary"]
st.subheader(f"Vocabulary: {vocab['name']}")
cols = st.columns(4)
cols[0].metric("Verbs", vocab["verbs"])
cols[1].metric("Objects", vocab["objects"])
cols[2].metric("HOI classes", vocab["hoi_classes"])
cols[3].metric("Rare classes", vocab["rare_classes"])

st.subheader("Similarity matrices")
st.table([{"matrix": role, "file": m["file"], "labels": m["labels"], "non-zero pairs": m["pairs"],
           "sparsity": f"{m['sparsity']:.2%}", "source": m["source"]}
          for role, m in summary["matrices"].items()])
