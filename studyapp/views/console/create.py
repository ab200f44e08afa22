"""The Create area: a study from a spec file in ``studies/`` or from uploads (the spec and every
file it names, or one zip), and the study types' own console tools."""

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from metrics import InputError
from studyapp.core import config, safe_markdown
from studyapp.platform.launch import spec_uploads
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies
from studyapp.platform.specs.spec_model import StudySpec
from studyapp.studytypes import study_types
from studyapp.views.console.common import actor, uploads_fit
from studyapp.views.studytypes import view_of


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
                create(lambda: create_from_file(choice))
        else:
            st.caption("No spec files in studies/.")
    with upload:
        upload_section()


def upload_section() -> None:
    """A spec with every file it names, or one zip holding them, checked as ``studyapp create``
    checks a spec file (``spec_uploads.spec_from_uploads``)."""
    limits = config.UPLOAD_LIMITS_MB
    spec_file = st.file_uploader(f"Spec (TOML, at most {limits['spec']} MB; or inside a zip below)", type=["toml"],
                                 key="spec-upload", max_upload_size=limits["spec"])
    files = st.file_uploader(f"Files the spec names: items, LLM ratings, practice items (CSV), images (a zip of "
                             f"the image_root folder), or one zip holding the spec and its files (at most "
                             f"{limits['items']} MB each)",
                             type=["csv", "zip", "json", "jsonl", "txt"], accept_multiple_files=True,
                             key="items-upload", max_upload_size=limits["items"])
    if (spec_file or files) and st.button("Create from upload", key="create-upload") and uploads_fit(
            (spec_file, "spec"), *[(f, "items") for f in files or []]):
        uploads = [spec_uploads.Upload(f.name, f.getvalue()) for f in files or []]
        spec = spec_uploads.Upload(spec_file.name, spec_file.getvalue()) if spec_file else None
        create(lambda: spec_uploads.launch(spec, uploads, actor=actor()))


def create_from_file(path: Path) -> StudySpec:
    spec = load_spec(path, actor=actor())
    studies.create_study(spec, actor=actor())
    return spec


def create(launch: Callable[[], StudySpec]) -> None:
    """Create the study ``launch()`` creates (from a spec file, or the uploads) and open it, or
    show its one-line error."""
    try:
        with st.spinner("Validating the spec and preparing the items..."):
            spec = launch()
    except InputError as exc:
        st.error(safe_markdown.text(exc))
        return
    st.session_state["created"] = (f"Created study {spec.slug!r} with {len(spec.items)} items.", spec.source_report)
    st.session_state["show-study"] = spec.slug
    st.rerun()   # to the new study, under Studies


def created_message() -> None:
    """The confirmation of the study created by the previous run, shown once."""
    if (created := st.session_state.pop("created", None)) is not None:
        message, source_report = created
        st.success(safe_markdown.text(message))
        if source_report:
            st.code(source_report, language=None)
