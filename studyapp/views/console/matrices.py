"""The Matrices area: recalibrate the similarity matrices from finished HOI-pair studies, save
them as named versions; list, download and compare the saved versions."""

import json
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from metrics import InputError
from metrics.study import compare_lines
from studyapp.core import accounts, config, safe_markdown
from studyapp.platform.operations import matrix_versions
from studyapp.studytypes import get_type
from studyapp.views.console.common import actor, download_button, linked, session_alive, share_form


@st.fragment
def matrices_section(all_studies) -> None:
    """Recalibrate from finished HOI-pair studies, inspect, save as a named version; list,
    download and compare the saved versions."""
    session_alive()
    st.subheader("Similarity matrices")
    if accounts.may(actor(), "create"):
        recalibrate_section(all_studies)
    else:
        st.caption("Saved versions can be inspected, downloaded and compared here; recalibrating needs a "
                   "researcher account.")
    versions_section()


def recalibrate_section(all_studies) -> None:
    pair_studies = [s.slug for s in all_studies if get_type(s.study_type).recalibrates_matrices
                    and accounts.may(actor(), "change", s)]
    chosen = st.multiselect("Studies whose ratings recalibrate the matrices", pair_studies,
                            key="recal-studies")
    left, middle, right = st.columns(3)
    w = left.number_input("w (verb weight)", min_value=0.05, max_value=0.95, value=0.5, step=0.05)
    prior = middle.number_input("Prior strength (ratings)", min_value=0.1, value=5.0, step=1.0)
    folds = right.number_input("Cross-validation folds", min_value=2, max_value=20, value=5)
    if chosen and st.button("Recalibrate", key="recalibrate"):
        try:
            with st.spinner("Cross-validating and fitting..."):
                st.session_state["recalibration"] = matrix_versions.recalibrate_studies(
                    chosen, w=float(w), prior_strength=float(prior), folds=int(folds), actor=actor())
        except InputError as exc:
            st.error(safe_markdown.text(exc))
    run = st.session_state.get("recalibration")
    if run is not None:
        r = run.result
        st.markdown(f"**Held-out agreement (Eq. 13)** from {r['n_ratings']} ratings of "
                    f"{r['n_items']} items in {safe_markdown.text(', '.join(run.studies))}")
        st.dataframe(pd.DataFrame([{"items": label, "n": n, "before": f["before"]["agreement"],
                                    "after": f["after"]["agreement"]}
                                   for label, n, f in [("all", r["n_items"], r)] + [
                                       (f"category {c}", v["n_items"], v) for c, v in r["by_category"].items()]]),
                     hide_index=True)
        if (note := run.before_note()) is not None:
            st.caption(safe_markdown.text(f"Note: {note}"))
        st.markdown("**Pairs that changed most**")
        st.dataframe(run.changed.head(20), hide_index=True)
        name = st.text_input("Version name", key="version-name")
        if st.button("Save version", key="save-version"):
            try:
                matrix_versions.save_version(name, run, actor=actor())
            except InputError as exc:
                st.error(safe_markdown.text(exc))
            else:   # the whole page again: the scoring section lists the new version
                st.session_state["version-saved"] = f"Saved matrix version {safe_markdown.text(name)}."
                st.rerun(scope="app")
    if saved := st.session_state.pop("version-saved", None):
        st.success(saved)


def versions_section() -> None:
    """The versions this account may see; downloads of those it owns or that are shared with it."""
    versions = matrix_versions.list_versions(actor=actor())
    if versions.empty:
        linked("version", [], "matrix version")
        st.caption("No saved matrix versions yet.")
        return
    st.dataframe(versions, hide_index=True)
    names = list(versions["name"])
    if (named := linked("version", names, "matrix version")) is not None and "version-pick" not in st.session_state:
        st.session_state["version-pick"] = named
    pick = st.selectbox("Version", names, key="version-pick")
    version = matrix_versions.version_row(pick, actor=actor())
    studies = versions.set_index("name").loc[pick, "studies"].split(", ")
    if accounts.may(actor(), "download", version):
        cols = st.columns(5)
        for column, (role, suffix) in zip(cols, [(r, x) for r in ("verb", "object") for x in (".csv", ".npz")]):
            download_button(column, f"{role}{suffix}", lambda role=role, suffix=suffix: matrix_file(pick, role, suffix),
                            f"{pick}-{role}{suffix}", studies=studies,
                            key=f"dl-{role}{suffix}")
        download_button(cols[4], "provenance.json", lambda: json.dumps(saved_version(pick)[2], indent=2),
                        f"{pick}-provenance.json", "application/json", studies=studies, key="dl-provenance")
    else:
        st.caption("Downloading a version needs it to be yours or shared with you.")
    if accounts.may(actor(), "change", version):
        share_form("version", pick)
    other = st.selectbox("Compare with", [v for v in names if v != pick], key="version-other",
                         index=None, placeholder="another version")
    if other:
        for role, line in version_comparison(pick, other):
            st.code(f"{role}: {pick} vs {other}\n" + line, language=None)


@st.cache_resource(max_entries=8, show_spinner=False)
def _saved_version(url: str, name: str):
    return matrix_versions.load_version(name)


def saved_version(name: str):
    """A saved matrix version, read once per process (a name is never reused for other matrices)."""
    return _saved_version(config.database_url(), name)


def matrix_file(name: str, role: str, suffix: str) -> bytes:
    verb, obj, _ = saved_version(name)
    with tempfile.TemporaryDirectory() as tmp:
        return (verb if role == "verb" else obj).save(Path(tmp) / f"{role}{suffix}").read_bytes()


@st.cache_data(max_entries=32, show_spinner=False)
def _comparison(url: str, a: str, b: str) -> list[tuple[str, str]]:
    (verb, obj, _), (verb_b, obj_b, _) = saved_version(a), saved_version(b)
    return [(role, compare_lines(x, y)[1]) for role, x, y in (("verb", verb, verb_b), ("object", obj, obj_b))]


def version_comparison(a: str, b: str) -> list[tuple[str, str]]:
    """``compare_lines`` of two saved versions' verb and object matrices (kept per pair)."""
    return _comparison(config.database_url(), a, b)
