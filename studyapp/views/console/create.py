"""The Create area: a study from a spec file in ``studies/`` or an upload, and the study types'
own console tools."""

import tempfile
from pathlib import Path

import streamlit as st

from metrics import InputError
from studyapp import config, inert, studies
from studyapp.spec_files import load_spec
from studyapp.studytypes import study_types, view_of
from studyapp.views.console.common import actor, uploads_fit


def create_area() -> None:
    """Create a study, and the study types' own console tools (e.g. sampling HOI pairs)."""
    create_section()
    for study_type in study_types().values():
        if (section := view_of(study_type).console_section) is not None:
            st.divider()
            section()


def create_section() -> None:
    st.subheader("Create a study")
    specs = sorted(config.STUDIES_DIR.glob("*.toml"))
    from_file, upload = st.tabs(["From studies/", "Upload"])
    with from_file:
        if specs:
            choice = st.selectbox("Spec file", specs, format_func=lambda p: p.name)
            if st.button("Create from file", key="create-file"):
                create(choice)
        else:
            st.caption("No spec files in studies/.")
    with upload:
        spec_file = st.file_uploader(f"Spec (TOML, at most {config.UPLOAD_LIMITS_MB['spec']} MB)", type=["toml"],
                                     key="spec-upload", max_upload_size=config.UPLOAD_LIMITS_MB["spec"])
        items_file = st.file_uploader(f"Items CSV (if the spec names one; at most {config.UPLOAD_LIMITS_MB['items']} MB)",
                                      type=["csv"], key="items-upload", max_upload_size=config.UPLOAD_LIMITS_MB["items"])
        if spec_file and st.button("Create from upload", key="create-upload") and uploads_fit(
                (spec_file, "spec"), (items_file, "items")):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / spec_file.name
                path.write_bytes(spec_file.getvalue())
                if items_file:
                    (Path(tmp) / items_file.name).write_bytes(items_file.getvalue())
                create(path)


def create(path: Path) -> None:
    try:
        with st.spinner("Validating the spec and preparing the items..."):
            spec = load_spec(path)
            studies.create_study(spec, actor=actor())
    except InputError as exc:
        st.error(inert.text(exc))
        return
    st.session_state["created"] = (f"Created study {spec.slug!r} with {len(spec.items)} items.", spec.source_report)
    st.session_state["show-study"] = spec.slug
    st.rerun()   # to the new study, under Studies


def created_message() -> None:
    """The confirmation of the study created by the previous run, shown once."""
    if (created := st.session_state.pop("created", None)) is not None:
        message, source_report = created
        st.success(inert.text(message))
        if source_report:
            st.code(source_report, language=None)
