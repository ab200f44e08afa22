"""``crosshoi_curation``: build or re-audit a CrossHOI-Bench question set as a study.

Stages 1–2 run when the study is created (``crosshoi``): questions from ground truth
(JSON Lines) or from a released CrossHOI JSON file, then negative candidates proposed from the
vocabulary and optionally filtered by imported model votes. Stage 3 is the study: an annotator
sees the image with the person's (and object's) box, the correct actions, and each candidate, and
marks it correct (hard positive), incorrect (negative) or ambiguous (excluded); they can add a
missing correct action or a hard negative from the vocabulary. The export adds
``benchmark.json`` (CrossHOI-Bench's format, majority consensus, ties excluded, four options
where enough exist — ``python -m metrics mcq --bench`` scores against it), ``changes.csv``
(every annotator change with the consensus it reached) and ``annotator_changes.csv``.

Spec::

    study_type = "crosshoi_curation"
    [items]
    source = "sampler"
    ground_truth = "gt.jsonl"      # or: bench = "crosshoi_bench_hum_box_final.json"
    setting = "human_box"          # human_box | human_object_box | image_level (ground truth only)
    image_root = "images"          # the images of the questions (served only from inside it)
    n_candidates = 6               # candidates per question (default 6)
    model_votes = "votes.csv"      # optional: question, candidate, model, vote (wrong/correct)
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from metrics import InputError
from metrics.core import at_least_problem
from studyapp.core import images

from ..base import Scale, Section, StudyType
from . import crosshoi


class CrosshoiCuration(StudyType):
    name = "crosshoi_curation"
    title = "CrossHOI-Bench curation (negatives, hard positives)"
    default_scale = Scale(values=(0,), labels=("submitted",))
    required_fields = ("image", "question")
    sampler_options = {"ground_truth": str, "bench": str, "setting": object, "image_root": str,
                       "n_candidates": int, "model_votes": str}
    custom_response = True

    # ----------------------------------------------------------------- items
    def sample_items(self, options: dict, base_dir: Path, tables_of):
        if ("ground_truth" in options) == ("bench" in options):
            raise InputError("[items] of a crosshoi_curation study needs exactly one of "
                             "'ground_truth' and 'bench'")
        if "image_root" not in options:
            raise InputError("[items] of a crosshoi_curation study needs 'image_root'")
        root = (base_dir / options["image_root"]).resolve()
        if not root.is_dir():
            raise InputError(f"key 'items.image_root' names no folder: {root}")
        setting = options.get("setting", "human_box")
        if "ground_truth" in options:
            if setting not in crosshoi.SETTINGS:
                raise InputError(f"key 'items.setting' must be one of {', '.join(crosshoi.SETTINGS)}")
            questions = crosshoi.questions_from_ground_truth(base_dir / options["ground_truth"], setting)
            source = f"ground truth {options['ground_truth']}"
        else:
            questions = crosshoi.questions_from_bench(base_dir / options["bench"])
            setting = "from benchmark file"
            source = f"benchmark file {options['bench']}"
        n = options.get("n_candidates", 6)
        if problem := at_least_problem(n, 1):
            raise InputError(f"key 'items.n_candidates' {problem}")
        crosshoi.propose_candidates(questions, n=n)
        if "model_votes" in options:
            crosshoi.filter_by_models(questions, base_dir / options["model_votes"])
        rows = []
        for q in questions:
            if len(q.key) > 64:
                raise InputError(f"question key {q.key!r} is longer than 64 characters")
            rows.append({"item_id": q.key, "image": q.image, "image_root": str(root),
                         "setting": setting,
                         "question": {"positives": q.positives, "candidates": q.candidates,
                                      "flags": q.flags, "boxes": q.boxes}})
        n_cand = sum(len(q.candidates) for q in questions)
        return pd.DataFrame(rows), (f"{len(rows)} questions from {source}; {n_cand} candidates "
                                    f"({n_cand / max(len(rows), 1):.1f} per question)")

    def normalize_item(self, row: dict, where: str) -> dict:
        question = row.get("question")
        if isinstance(question, str):
            try:
                question = json.loads(question)
            except json.JSONDecodeError:
                raise InputError(f"{where}: question is not JSON") from None
        if not isinstance(question, dict) or not isinstance(question.get("positives"), list) \
                or not isinstance(question.get("candidates"), list):
            raise InputError(f"{where}: question needs lists 'positives' and 'candidates'")
        overlap = set(question["positives"]) & set(question["candidates"])
        if overlap:
            raise InputError(f"{where}: candidate {sorted(overlap)[0]!r} is also a positive")
        root = row.get("image_root") or ""
        try:
            images.resolve_image(root, row.get("image"))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        question.setdefault("flags", {})
        question.setdefault("boxes", {})
        return {"image": str(row["image"]), "image_root": str(root),
                "setting": str(row.get("setting") or ""), "question": question}

    def export_item(self, fields: dict) -> dict:
        q = fields["question"]
        return {"image": fields["image"], "setting": fields.get("setting", ""),
                "positives": " | ".join(q["positives"]), "candidates": " | ".join(q["candidates"]),
                "boxes": json.dumps(q.get("boxes") or {})}

    def image_paths(self, fields: dict) -> list[tuple[str, str]]:
        return [(fields["image_root"], fields["image"])]

    # ----------------------------------------------------------------- answering
    def describe_response(self, fields: dict, value: str, scale: Scale) -> str:
        marks, plus, minus = crosshoi.decode_response(value)
        named = lambda ids: ", ".join(crosshoi.class_phrase(i)
                                      for i in ids) or "none"
        by_mark: dict[str, list[str]] = {}
        for candidate, mark in zip(fields["question"]["candidates"], marks):
            by_mark.setdefault(mark, []).append(crosshoi.phrase(candidate))
        parts = [f"{mark}: {', '.join(c)}" for mark, c in by_mark.items()]
        return "; ".join(parts + [f"added correct: {named(plus)}", f"added hard negatives: {named(minus)}"])

    def parse_response(self, value, scale: Scale) -> str:
        """A response string, or the answer form's ``{marks, plus, minus}``, in stored form."""
        if isinstance(value, dict):
            try:
                value = crosshoi.encode_response(value["marks"], value["plus"], value["minus"])
            except (KeyError, TypeError):
                raise InputError("the answer form sent an incomplete response") from None
        marks, plus, minus = crosshoi.decode_response(value)
        return crosshoi.encode_response(marks, plus, minus)

    # ----------------------------------------------------------------- export
    def export_tables(self, tables: dict, fields_by_key: dict) -> dict:
        """``benchmark.json``, ``changes.csv`` and ``annotator_changes.csv`` of the study."""
        ratings = tables["ratings.csv"]
        ratings = ratings[ratings["phase"] == "main"]
        votes: dict[str, dict[str, dict[str, str]]] = {}
        for row in ratings.itertuples():
            question = fields_by_key[str(row.item_id)]["question"]
            votes.setdefault(str(row.item_id), {})[str(row.annotator)] = crosshoi.annotator_votes(
                question, row.rating)
        curated, changes = {}, []
        for key, fields in fields_by_key.items():
            if key not in votes:
                continue  # nobody refined it yet
            question = fields["question"]
            curated[key] = (fields["image"], crosshoi.curate(question, votes[key]))
            changes += crosshoi.change_rows(key, question, votes[key])
        columns = ["annotator", "question", "action", "change", "consensus"]
        changes_df = pd.DataFrame(changes, columns=columns)
        answered = ratings.groupby("annotator").size().rename("questions")
        if len(changes_df):
            per = changes_df.groupby(["annotator", "change"]).size().unstack(fill_value=0)
            answered = pd.concat([answered, per], axis=1).fillna(0).astype(int)
        summary = answered.to_frame() if isinstance(answered, pd.Series) else answered
        summary = summary.reset_index(names="annotator")
        return {"benchmark.json": json.dumps(crosshoi.export_bench(curated), indent=1) + "\n",
                "changes.csv": changes_df, "annotator_changes.csv": summary}

    def dashboard_sections(self, slug: str, tables: dict, fields_by_key: dict, resamples: int) -> list[Section]:
        """Consensus so far: the changes the annotators made to the candidates, per change and
        per annotator (the export's ``changes.csv`` and ``annotator_changes.csv``)."""
        changes = tables["changes.csv"]
        if changes.empty:
            raise InputError("no question has been curated yet")
        counts = (changes.groupby(["change", "consensus"]).size().rename("actions").reset_index())
        return [Section("Curation: consensus and changes",
                        f"{changes['question'].nunique()} questions curated; each row counts the "
                        "candidate actions by the change made and whether the annotators agree on it.",
                        {"changes": counts, "per annotator": tables["annotator_changes.csv"]})]
