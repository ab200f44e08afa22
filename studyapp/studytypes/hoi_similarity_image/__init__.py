"""``hoi_similarity_image``: the with-image pass of an HOI-similarity study (SHOE supp. §6.2).

The study is linked to an earlier ``hoi_similarity`` study without images. Each annotator (same
pseudonym as in the earlier study — ``python -m studyapp invite SLUG --annotators-of EARLIER``)
sees the pairs they rated there, now with an image of the ground-truth HOI class, and their own
earlier rating preselected; they keep it or change it. The earlier rating is frozen into the item
when the study is created, so both answers are kept: ``ratings.csv`` has ``rating`` (with image)
and ``earlier_rating`` (without). Analysis: ``python -m metrics image-update`` and the agreement
report.

Spec (``[items]`` with ``source = "sampler"``)::

    [items]
    source = "sampler"
    linked_study = "demo"                       # slug of the earlier study (on this database)
    images = "../.data/demo_images/images.csv"  # gt_verb, gt_object, image[, human_box, object_box]
    image_root = "../.data/demo_images"         # images are served only from inside this folder

``images.csv`` maps a ground-truth HOI class (synsets, or labels of the study's dataset —
``[items] dataset``, which must be the earlier study's; HICO-DET by default) to an image path
relative to ``image_root``; boxes are ``"x1 y1 x2 y2"`` (or JSON lists) and are drawn.
Set ``raters_per_item`` to the earlier study's, so every earlier rater gets their pairs back.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd

from metrics import InputError, datasets
from metrics.detection import parse_box
from studyapp.core import images

from ..base import THIS_STUDY, Section, StudyType
from ..hoi_similarity import HoiSimilarity, _resolve

OWN_FIELDS = ("image", "image_root", "human_box", "object_box", "earlier", "linked_study")


def _parse_box(text, where: str, field: str):
    """A box of an images CSV or an item: empty, or four numbers (JSON ``[x1, y1, x2, y2]`` or
    separated by spaces or commas) that :func:`metrics.detection.parse_box` accepts:
    finite, with x1 ≤ x2 and y1 ≤ y2."""
    if text in (None, "") or (isinstance(text, float) and pd.isna(text)):
        return None
    if isinstance(text, (list, tuple)):
        values = list(text)
    else:
        raw = str(text).strip()
        try:
            values = json.loads(raw) if raw.startswith("[") else [float(v) for v in raw.replace(",", " ").split()]
        except (ValueError, json.JSONDecodeError):
            raise InputError(f"{where}: {field} {text!r} is not four numbers x1 y1 x2 y2") from None
    return parse_box(values, f"{where}: {field}")


def read_image_map(path: Path, dataset: str | None = None) -> dict[tuple[str, str], dict]:
    """(verb synset, object synset) -> {image, human_box, object_box} from images.csv (labels
    are ``dataset``'s, HICO-DET's by default)."""
    out = {}
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        for column in ("gt_verb", "gt_object", "image"):
            if column not in (reader.fieldnames or []):
                raise InputError(f"{path}: missing column '{column}'")
        for row in reader:
            where = f"{path} line {reader.line_num}"
            verb, _ = _resolve(row["gt_verb"], "v", "gt_verb", where, dataset)
            obj, _ = _resolve(row["gt_object"], "n", "gt_object", where, dataset)
            if not (row.get("image") or "").strip():
                raise InputError(f"{where}: image is empty")
            out.setdefault((verb, obj), {
                "image": row["image"].strip(),
                "human_box": _parse_box(row.get("human_box"), where, "human_box"),
                "object_box": _parse_box(row.get("object_box"), where, "object_box")})
    return out


class HoiSimilarityImage(HoiSimilarity):
    name = "hoi_similarity_image"
    title = "HOI pair similarity with an image (SHOE supp. §6.2)"
    sampler_options = {"linked_study": object, "images": str, "image_root": str}
    restricts_items = True
    export_columns = ()

    def normalize_item(self, row: dict, where: str) -> dict:
        own = {k: row.get(k) for k in OWN_FIELDS}
        fields = super().normalize_item({k: v for k, v in row.items() if k not in OWN_FIELDS}, where)
        if not own["image_root"]:
            raise InputError(f"{where}: image_root is empty")
        try:
            images.resolve_image(own["image_root"], own["image"])
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        earlier = own["earlier"] or {}
        if isinstance(earlier, str):
            earlier = json.loads(earlier)
        fields.update(image=str(own["image"]), image_root=str(own["image_root"]),
                      human_box=_parse_box(own["human_box"], where, "human_box"),
                      object_box=_parse_box(own["object_box"], where, "object_box"),
                      earlier={str(k): str(v) for k, v in earlier.items()},
                      linked_study=str(own["linked_study"] or ""))
        return fields

    @staticmethod
    def _linked_study_root(options: dict, base_dir: Path) -> tuple[str, Path]:
        """The earlier study's slug and the images folder, both checked."""
        slug = options["linked_study"]
        if not isinstance(slug, str) or not slug:
            raise InputError("key 'items.linked_study' must be the slug of the earlier study")
        root = (base_dir / options["image_root"]).resolve()
        if not root.is_dir():
            raise InputError(f"key 'items.image_root' names no folder: {root}")
        return slug, root

    @staticmethod
    def _earlier_ratings(ratings: pd.DataFrame) -> dict[str, dict[str, str]]:
        """item -> annotator -> their current main rating in the earlier study."""
        ratings = ratings[ratings["phase"] == "main"]
        earlier: dict[str, dict[str, str]] = {}
        for row in ratings.itertuples():
            earlier.setdefault(str(row.item_id), {})[str(row.annotator)] = str(row.rating)
        return earlier

    @staticmethod
    def _pair_fields(item: dict) -> dict:
        """The pair's fields as the earlier study stored them (missing ones empty)."""
        base = {k: item.get(k) for k in ("gt_verb", "gt_object", "pred_verb", "pred_object",
                                          "gt_verb_label", "gt_object_label", "level",
                                          "verb_sim", "object_sim", "dataset")}
        base = {k: ("" if v is None or (isinstance(v, float) and pd.isna(v)) else v)
                for k, v in base.items()}
        base["dataset"] = base["dataset"] or datasets.DEFAULT  # the earlier study's dataset
        return base

    @staticmethod
    def _unfinished_warnings(report: str, slug: str, items, rows: list, annotators: list,
                             people: pd.DataFrame | None) -> str:
        """Warnings in front of the report when the earlier study still has unrated pairs or
        annotators mid-way (their later ratings will not come with images)."""
        unrated = len(items) - len(rows)
        if unrated:
            # the earlier ratings are frozen into the items now: later ones will not be shown
            report = (f"warning: study {slug!r} is not finished — {unrated} of its {len(items)} pairs have no "
                      f"rating yet and are left out; ratings given there from now on will not come "
                      f"with images.\n" + report)
        midway = [] if people is None else [
            f"{r.annotator} ({r.n_ratings} rated)" for r in people.itertuples()
            if r.status == "rating" and r.annotator in annotators]
        if midway:
            # each annotator gets the pairs they had rated when this pass was created
            report = (f"warning: {len(midway)} annotator{'s' if len(midway) > 1 else ''} of study "
                      f"{slug!r} {'are' if len(midway) > 1 else 'is'} still mid-way: "
                      f"{', '.join(midway)}; the pairs they rate there from now on will not come "
                      f"with images.\n" + report)
        return report

    def sample_items(self, options: dict, base_dir: Path, tables_of):
        for key in ("linked_study", "images", "image_root"):
            if key not in options:
                raise InputError(f"[items] of a {self.name} study needs '{key}'")
        slug, root = self._linked_study_root(options, base_dir)
        image_map = read_image_map(base_dir / options["images"], options.get("dataset"))
        try:
            tables = tables_of(slug)  # the earlier study's items and current ratings
        except InputError as exc:
            raise InputError(f"key 'items.linked_study': {exc}") from None
        earlier = self._earlier_ratings(tables["ratings.csv"])
        items = tables["items.csv"]
        items = items[items["role"] == "main"]
        rows, missing = [], []
        for item in items.to_dict("records"):
            key = str(item["item_id"])
            if key not in earlier:
                continue
            found = image_map.get((item["gt_verb"], item["gt_object"]))
            if found is None:
                missing.append(f"{item.get('gt_verb_label') or item['gt_verb']} "
                               f"{item.get('gt_object_label') or item['gt_object']}")
                continue
            rows.append({"item_id": key, **self._pair_fields(item), **found, "image_root": str(root),
                         "earlier": earlier[key], "linked_study": slug})
        if missing:
            raise InputError(f"{base_dir / options['images']}: no image for the ground-truth "
                             f"class {missing[0]!r} ({len(missing)} classes lack one)")
        if not rows:
            raise InputError(f"study {slug!r} has no rated main items to show with images")
        annotators = sorted({a for r in rows for a in r["earlier"]})
        report = (f"{len(rows)} pairs of study {slug!r} rated by {len(annotators)} annotators "
                  f"({', '.join(annotators)}); images under {root}. Invite them with "
                  f"`python -m studyapp invite {THIS_STUDY} --annotators-of {slug}`.")
        report = self._unfinished_warnings(report, slug, items, rows, annotators, tables.get("annotators.csv"))
        return pd.DataFrame(rows), report

    def attention_items(self, items, count):
        return StudyType.attention_items(self, items, count)

    def simulated_scores(self, fields_list):
        return StudyType.simulated_scores(self, fields_list)

    def image_paths(self, fields: dict) -> list[tuple[str, str]]:
        return [(fields["image_root"], fields["image"])]

    def preselect(self, fields: dict, pseudonym: str) -> str | None:
        return fields.get("earlier", {}).get(pseudonym)

    def eligible(self, fields: dict, pseudonym: str) -> bool:
        return pseudonym in fields.get("earlier", {})

    def rating_columns(self, fields: dict, pseudonym: str) -> dict:
        return {"earlier_rating": fields.get("earlier", {}).get(pseudonym, "")}

    def export_item(self, fields: dict) -> dict:
        out = super().export_item(fields)
        out.pop("earlier", None)
        out.pop("image_root", None)
        for role in ("human", "object"):
            box = out.get(f"{role}_box")
            out[f"{role}_box"] = " ".join(f"{v:g}" for v in box) if box else None
        return out

    def dashboard_sections(self, slug: str, tables: dict, fields_by_key: dict, resamples: int) -> list[Section]:
        """The pair analyses, then how often the image changed the earlier rating (SHOE supp. §6.2)."""
        from metrics.study import image_update, pair_ratings, summary_frame

        sections = super().dashboard_sections(slug, tables, fields_by_key, resamples)
        ratings = tables["ratings.csv"]
        paired = pair_ratings(ratings[ratings["phase"] == "main"])
        if paired.empty:
            return sections
        result = image_update(paired)
        return sections + [Section(
            "Ratings changed with the image",
            f"{result['n_updated']} of {result['n']} ratings with an earlier answer were updated "
            f"({100 * result['share_updated']:.1f}%, 95% interval {100 * result['share_updated_ci'][0]:.1f}–"
            f"{100 * result['share_updated_ci'][1]:.1f}%).", {"update rate": summary_frame(result)})]
