"""``imsitu_correctness``: mark each of a model's top-k verb predictions for an image as correct or
not (the human judgment of Yao et al. §4.2, Table 5).

An item is an image and one model's ranked verb predictions (imSitu gerunds); the annotator
marks each of the first k (default 5) as correctly describing the image, by clicking a verb or
pressing its rank's digit key (1–k), then submits with Enter (``studyapp.views.components.mark_form``,
which also enlarges the image on request). The model is never shown, and
items of several models for one image are shuffled (``imsitu_correctness.items``). The stored
response is one character per shown prediction, ``1`` correct and ``0`` not: ``"10100"``.

Spec ``[items]`` (``source = "sampler"``): ``examples = "<imSitu examples folder>"`` or
``predictions = "<JSON>"`` with ``image_root``; optional ``model``, ``gold`` (JSON image → verb),
``clusters`` (sense clusters JSON, kept with the items for the alignment table), ``k``, ``seed``.
An items CSV works too: ``item_id, image, image_root, model, predictions`` (``;``-joined),
optional ``gold``.
"""

from __future__ import annotations

import json
from pathlib import Path

from metrics import InputError
from metrics.imsitu import split_verbs
from studyapp.core import images

from ..base import Scale, Section, StudyType

MARK_SCALE = Scale(values=(0, 1), labels=("incorrect", "correct"))
MAX_K = 9  # one digit key per shown prediction


class ImsituCorrectness(StudyType):
    name = "imsitu_correctness"
    title = "imSitu verb correctness (top-k marks)"
    default_scale = MARK_SCALE
    required_fields = ("image", "image_root", "model", "predictions")
    sampler_options = {"examples": str, "predictions": str, "image_root": str, "gold": str,
                       "clusters": str, "model": object, "k": int, "seed": int}
    custom_response = True

    # ----------------------------------------------------------------- items
    def normalize_item(self, row: dict, where: str) -> dict:
        for field in ("image", "image_root", "model"):
            if not str(row.get(field) or "").strip():
                raise InputError(f"{where}: {field} is empty")
        try:
            images.resolve_image(row["image_root"], str(row["image"]))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        predictions = split_verbs(row.get("predictions") or [])
        if not predictions:
            raise InputError(f"{where}: predictions is empty")
        if len(predictions) > MAX_K:
            raise InputError(f"{where}: {len(predictions)} predictions to mark; at most {MAX_K} "
                             "(set items.k)")
        fields = {"image": str(row["image"]), "image_root": str(row["image_root"]),
                  "model": str(row["model"]).strip(), "predictions": predictions,
                  "gold": split_verbs(row.get("gold") or [])}
        clusters = row.get("clusters")
        if isinstance(clusters, str) and clusters.strip():
            clusters = json.loads(clusters)
        if clusters:
            fields["clusters"] = {str(c): split_verbs(v) for c, v in clusters.items()}
        return fields

    def sample_items(self, options: dict, base_dir: Path, tables_of):
        from .items import build_items

        return build_items(options, base_dir)

    def image_paths(self, fields: dict) -> list[tuple[str, str]]:
        return [(fields["image_root"], fields["image"])]

    def export_item(self, fields: dict) -> dict:
        out = {"image": fields["image"], "model": fields["model"],
               "predictions": ";".join(fields["predictions"]), "k": len(fields["predictions"]),
               "gold": ";".join(fields.get("gold", []))}
        if "clusters" in fields:
            out["clusters"] = json.dumps(fields["clusters"], sort_keys=True)
        return out

    def export_tables(self, tables: dict, fields_by_key: dict) -> dict:
        """``human_accuracy.csv``: Top-1 / Top-5 per model (majority over annotators, intervals)."""
        from metrics.imsitu import human_accuracy, majority_labels, study_human_labels

        from .analysis import human_accuracy_table

        ratings = tables["ratings.csv"]
        ratings = ratings[ratings["phase"] == "main"]
        if ratings.empty:
            return {}
        items = tables["items.csv"]
        items = items[items["role"] == "main"].astype({"item_id": str})
        human = majority_labels(study_human_labels(ratings, items))
        return {"human_accuracy.csv": human_accuracy_table({"human_accuracy": human_accuracy(human)})}

    # ----------------------------------------------------------------- answers
    def describe_response(self, fields: dict, value: str, scale: Scale) -> str:
        correct = [v.replace("_", " ") for v, m in zip(fields["predictions"], str(value)) if m == "1"]
        return "marked correct: " + (", ".join(correct) if correct else "none")

    def parse_response(self, value, scale: Scale) -> str:
        text = str(value).strip()
        if not 1 <= len(text) <= MAX_K or set(text) - {"0", "1"}:
            raise InputError(f"response {text!r} must be 1–{MAX_K} characters of 0 / 1 "
                             "(one per shown prediction)")
        return text

    def dashboard_sections(self, slug: str, tables: dict, fields_by_key: dict, resamples: int) -> list[Section]:
        """Human Top-1 / Top-5 accuracy per model and, with gold verbs, Tables 5–6."""
        from studyapp.core import charts

        from . import analysis

        result = analysis.analyse_study(slug, tables, fields_by_key, n_resamples=resamples)
        accuracy = analysis.human_accuracy_table(result)
        sections = [Section("Human accuracy",
                            f"{result['n_annotators']} annotators, {result['n_ratings']} ratings; "
                            f"majority over annotators, 95% bootstrap intervals ({resamples} resamples).",
                            {"accuracy": accuracy}, [charts.accuracy_intervals(accuracy)])]
        if result["alignment"] is not None:
            sections.append(Section("Criteria against the human marks (Tables 5–6)", "",
                                    {"accuracy by criterion": analysis.accuracy_frame(result["alignment"]),
                                     "agreement": analysis.alignment_frame(result["alignment"])}))
        return sections
