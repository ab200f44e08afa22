"""The Scoring area: score uploaded predictions against a ground truth with the baseline and
the chosen matrix versions (``metrics score``)."""

import tempfile
from pathlib import Path

import streamlit as st

from metrics import InputError
from studyapp.core import config, safe_markdown
from studyapp.platform.operations import matrix_versions, scoring
from studyapp.views.console.common import actor, download_button, session_alive, uploads_fit


@st.fragment
def scoring_section() -> None:
    """Upload a ground truth and predictions, choose matrix versions, score (``metrics score``)."""
    session_alive()
    st.subheader("Score models")
    st.caption("JSON Lines or QPIC/CDN files, exactly as `python -m metrics score` reads them; the "
               "baseline WordNet matrices and each chosen version side by side.")
    limit = config.UPLOAD_LIMITS_MB["detections"]
    gt_file = st.file_uploader("Ground truth", type=["jsonl", "json"], key="score-gt", max_upload_size=limit)
    pred_files = st.file_uploader("Predictions (one file per model)", type=["jsonl", "json"],
                                  accept_multiple_files=True, key="score-pred", max_upload_size=limit)
    chosen = st.multiselect("Recalibrated matrix versions", list(matrix_versions.list_versions(actor=actor())["name"]),
                            key="score-versions")
    if gt_file and pred_files and st.button("Score", key="score") and uploads_fit(
            (gt_file, "detections"), *[(f, "detections") for f in pred_files]):
        bar = st.progress(0.0, text="reading the files...")
        with tempfile.TemporaryDirectory() as tmp:
            gt_path = Path(tmp) / gt_file.name   # under its own name, so errors name the file
            gt_path.write_bytes(gt_file.getvalue())
            models = {}
            for k, upload in enumerate(pred_files):   # a model per file, named by the file
                name = Path(upload.name).stem
                name = f"{name} ({k + 1})" if name in models else name
                folder = Path(tmp) / f"model{k}"
                folder.mkdir()
                models[name] = folder / upload.name
                models[name].write_bytes(upload.getvalue())
            try:
                st.session_state["scores"] = scoring.score_models(
                    gt_path, models, chosen, progress=lambda f, text: bar.progress(f, text=text), actor=actor())
            except InputError as exc:
                bar.empty()
                st.session_state.pop("scores", None)   # the error replaces the previous results
                message = str(exc)
                for path in (gt_path, *models.values()):   # the uploaded name, not the temporary folder
                    message = message.replace(str(path), path.name)
                st.error(safe_markdown.text(message))
    scores = st.session_state.get("scores")
    if scores is not None:
        st.dataframe(scores.table, hide_index=True)
        download_button(st, "Download scores.json", scores.to_json, "scores.json", "application/json",
                        studies=scores.studies, key="scores-download")
