"""How an HOI pair is shown, and the pair sampler on the researcher console."""

from __future__ import annotations

import streamlit as st

from studyapp.core import safe_markdown
from studyapp.platform.records import exports
from studyapp.studytypes.hoi_similarity import sampler

from . import StudyView

ANSWER_HELP = "Click or tap the answer that fits. The next item follows at once."
KEYS_HELP = "Keys: an answer's number ({first}–{last}) gives it."


SIDES = (("gt", "Ground truth"), ("pred", "Prediction"))


def gloss(text: str) -> str:
    """A WordNet gloss as shown: without the trailing comma or semicolon some glosses end with
    ("move with force,")."""
    return str(text).strip().rstrip(",;").rstrip()


def render_item(fields: dict, *, synset_codes: bool = True) -> None:
    """Both sides of the pair as Streamlit Markdown (the instructions' example, the console's
    preview); the annotator's item screen draws :func:`item_content` instead.
    ``synset_codes``: the WordNet codes beside the glosses (spec ``[display]``)."""
    d = fields["display"]
    for column, (side, title) in zip(st.columns(2, border=True), SIDES):
        lines = [f"_{title}_", f"**{safe_markdown.text(d[side + '_verb'] + ' ' + d[side + '_object'])}**"]
        for part in ("verb", "object"):
            key = f"{side}_{part}"
            code = f" {safe_markdown.code(fields[key])}" if synset_codes else ""
            lines.append(f"**{safe_markdown.text(d[key])}**{code} — {safe_markdown.text(gloss(d[key + '_gloss']))}")
        column.markdown("\n\n".join(lines))


def item_content(fields: dict, *, synset_codes: bool = True) -> list:
    """The pair as item-screen nodes (``studyapp.views.components``): both sides, each with its
    verb and object, their glosses and (``synset_codes``) synset codes (plain text, set as
    text by the page)."""
    d = fields["display"]
    sides = []
    for side, title in SIDES:
        lines = [["em", {}, title], ["h3", {}, f"{d[side + '_verb']} {d[side + '_object']}"]]
        for part in ("verb", "object"):
            key = f"{side}_{part}"
            code = [" ", ["code", {}, str(fields[key])]] if synset_codes else []
            lines.append(["p", {}, ["strong", {}, str(d[key])], *code, " — ", gloss(d[key + "_gloss"])])
        sides.append(["div", {"class": "side"}, *lines])
    return [["div", {"class": "pair"}, *sides]]


def console_section() -> None:
    st.subheader("Sample HOI pairs")
    left, right = st.columns(2)
    n = left.number_input("Pairs", min_value=1, max_value=5000, value=500, step=50)
    seed = right.number_input("Seed", min_value=0, value=0, step=1)
    if st.button("Sample", key="sample"):
        with st.spinner("Sampling..."):
            items, report = sampler.sample_pairs(int(n), int(seed))
        st.session_state["sampled"] = (items, report.text())
    if "sampled" in st.session_state:
        items, text = st.session_state["sampled"]
        st.code(text, language=None)
        st.download_button("Download items.csv", exports.csv_bytes(items), "items.csv", "text/csv")
        st.dataframe(items, hide_index=True)


VIEW = StudyView(name="hoi_similarity", render_item=render_item, item_content=item_content,
                 console_section=console_section,
                 answer_help=ANSWER_HELP, keys_help=KEYS_HELP)
