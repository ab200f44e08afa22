"""``hoi_similarity``: rate how similar a predicted HOI is to the ground truth, 0–4 (SHOE §4.3).

An item pairs a ground-truth HOI with a predicted one (verb and object each a WordNet synset or a
label of the study's dataset: ``[items] dataset`` in the spec, HICO-DET by default). Both are
shown side by side, every verb and object with its synset and gloss (SHOE supplementary §5.1,
Fig. 1); glosses are looked up once, when the study is created, and
kept with the item. Items come from an items CSV (SHOE's study files too) or from the pair
sampler (``sampler``); the ratings are analysed against the metrics (``analysis``), simulated
(``python -m studyapp simulate``) and recalibrate the similarity matrices.

The dataset travels with every item: an item of a study over another dataset than HICO-DET has a
``dataset`` field (exported as the ``dataset`` column of ``items.csv``), and its labels, glosses,
simulated ratings and baseline matrices are that dataset's; an item without one is HICO-DET's
(studies made before datasets existed, and HICO-DET studies, whose exports are unchanged).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from metrics import InputError, SimilarityMatrix, combine, datasets
from metrics.core import SCALE_MAX
from metrics.study import SHOE_COLUMNS, is_shoe_layout
from metrics.vocab import gloss, is_synset_name, lemma_names, load_default, pos_of

from ..base import Scale, Section, StudyType
from . import sampler

SHOE_SCALE = Scale(values=(0, 1, 2, 3, 4), labels=(
    "completely dissimilar",
    "somewhat related but clearly distinct",
    "related but easily distinguishable",
    "very similar with subtle differences",
    "interchangeable",
))
SLOTS = (("gt_verb", "v"), ("gt_object", "n"), ("pred_verb", "v"), ("pred_object", "n"))
NUMERIC = {"verb_sim": (0.0, 1.0), "object_sim": (0.0, 1.0), "shoe_sim": (0.0, 1.0)}
POS_WORD = {"v": "verb", "n": "noun"}


def dataset_of(fields: dict) -> str:
    """The dataset whose vocabulary an item (or a row on its way to becoming one) uses."""
    return str(fields.get("dataset") or datasets.DEFAULT)


def check_dataset(name: str, where: str) -> str:
    """``name`` if it is a registered dataset; else one line naming ``where``."""
    try:
        datasets.get(name)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    return name


def _resolve(value: str, pos: str, field: str, where: str, dataset: str | None = None) -> tuple[str, str]:
    """(synset, word shown) of a synset name or a label of ``dataset`` (HICO-DET by default)."""
    text = str(value).strip()
    if is_synset_name(text):
        if pos_of(text) != pos:
            raise InputError(f"{where}: {field} {text!r} is not a {POS_WORD[pos]} synset")
        return text, lemma_names(text)[0]
    synset = datasets.load_vocabulary(dataset).synset(text, pos)
    if synset:
        return synset, shown_word(text, pos, dataset)
    raise InputError(f"{where}: {field} {text!r} is neither a WordNet {POS_WORD[pos]} synset "
                     f"nor a {datasets.get(dataset).title} {'verb' if pos == 'v' else 'object'} label")


def shown_word(label: str, pos: str, dataset: str | None = None) -> str:
    """How a dataset label is shown to annotators: its words (``dining_table``: dining table). A
    label that says more than the word — V-COCO's action-role labels (``kick-obj``), whose
    vocabulary has an ``action`` column — shows the action's words (kick); the role is in the
    exported label, the sense in the synset and gloss shown with it.

    >>> shown_word("dining_table", "n"), shown_word("work_on_computer-instr", "v", "vcoco")
    ('dining table', 'work on computer')
    """
    vocabulary = datasets.load_vocabulary(dataset)
    table = vocabulary.verbs if pos == "v" else vocabulary.objects
    if "action" in table.columns:
        hit = table.loc[table["label"] == str(label).strip().lower().replace(" ", "_"), "action"]
        if len(hit) and hit.iloc[0]:
            label = hit.iloc[0]
    return str(label).replace("_", " ")


def baseline_matrices(dataset: str | None = None) -> tuple[SimilarityMatrix, SimilarityMatrix]:
    """The WordNet-baseline verb and object matrices of ``dataset`` (HICO-DET by default)."""
    return load_default("v", dataset=dataset), load_default("n", dataset=dataset)


def _category(fields: dict) -> int:
    same_verb = fields["gt_verb"] == fields["pred_verb"]
    same_object = fields["gt_object"] == fields["pred_object"]
    if same_verb and same_object:
        return 0
    return 1 if same_verb else 2 if same_object else 3


def latent_similarity(fields: dict, verb_matrix: SimilarityMatrix, object_matrix: SimilarityMatrix,
                      w: float = 0.5) -> float:
    """The true similarity (0–4) of an HOI pair item, as the simulated raters see it."""
    v = fields.get("verb_sim")
    o = fields.get("object_sim")
    if v is None:
        v = verb_matrix.sim(fields["pred_verb"], fields["gt_verb"])
    if o is None:
        o = object_matrix.sim(fields["pred_object"], fields["gt_object"])
    return float(SCALE_MAX * combine(v, o, method="arithmetic", w=w))


class HoiSimilarity(StudyType):
    name = "hoi_similarity"
    title = "HOI pair similarity (SHOE user study)"
    default_scale = SHOE_SCALE
    required_fields = ("gt_verb", "gt_object", "pred_verb", "pred_object")
    sampler_options = {"n": int, "seed": int, "class_weights": str, "verb_sim": str,
                       "object_sim": str, "w": float, "redistribute": bool, "categories": list,
                       "closed_vocabulary": bool}
    export_columns = ("item_id", "category", "gt_verb", "gt_object", "pred_verb", "pred_object",
                      "level", "verb_sim", "object_sim")
    recalibrates_matrices = True
    uses_dataset = True
    sampler = sampler   # SHOE's pair sampler, for `studyapp sample` (which reaches it through the registry)

    @staticmethod
    def from_shoe_row(row: dict) -> dict:
        """A row of SHOE's study files (``metrics.study._shoe_pool.SHOE_COLUMNS``) in this type's layout:
        synsets as the pair, SHOE's labels as the ground truth's words, ``similarity_level`` as
        ``level``; the prediction is shown by its synset's first lemma, as SHOE's app did."""
        out = {k: v for k, v in row.items() if k not in ("gt_verb", "gt_object", "similarity_level", "bin")}
        out.update(gt_verb=row["gt_verb_synset"], gt_object=row["gt_object_synset"],
                   pred_verb=row["pred_verb_synset"], pred_object=row["pred_object_synset"],
                   gt_verb_label=row.get("gt_verb", ""), gt_object_label=row.get("gt_object", ""),
                   level=row.get("similarity_level", ""))
        for k in ("gt_verb_synset", "gt_object_synset", "pred_verb_synset", "pred_object_synset"):
            out.pop(k)
        return out

    def line_numbered_ids(self, columns: list[str]) -> str | None:
        """SHOE's study files (image_id, gt_verb, ..., similarity_level) have no item_id: their
        rows are numbered ``shoe0001``, ... (the row is translated by ``normalize_item``). A header
        without item_id that has most of SHOE's columns is refused naming the ones it lacks."""
        if is_shoe_layout(columns):
            return "shoe"
        missing = [c for c in SHOE_COLUMNS if c not in columns]
        if "item_id" not in columns and len(missing) <= len(SHOE_COLUMNS) // 2:
            raise InputError(f"missing column{'s' * (len(missing) > 1)} {', '.join(map(repr, missing))} of SHOE's "
                             f"layout ({', '.join(SHOE_COLUMNS)})")
        return None

    def example_fields(self) -> set[str]:
        return {*self.required_fields, "gt_verb_label", "gt_object_label"}

    @staticmethod
    def _slot_fields(row: dict, where: str, dataset: str) -> tuple[dict, dict]:
        """The four verb / object slots resolved to synsets, with the words shown for them."""
        fields: dict = {}
        display: dict = {}
        for field, pos in SLOTS:
            value = row.get(field)
            if value is None or str(value).strip() == "":
                raise InputError(f"{where}: {field} is empty")
            fields[field], display[field] = _resolve(value, pos, field, where, dataset)
        for field in ("gt_verb_label", "gt_object_label"):
            if row.get(field):
                fields[field] = str(row[field])
                display[field[:-6]] = shown_word(str(row[field]), "v" if "verb" in field else "n", dataset)
        for side in ("verb", "object"):
            if fields[f"pred_{side}"] == fields[f"gt_{side}"]:
                display[f"pred_{side}"] = display[f"gt_{side}"]
        return fields, display

    @staticmethod
    def _checked_category(row: dict, fields: dict, where: str) -> int:
        """The pair's category; a category given in the row must be it."""
        computed = _category(fields)
        if row.get("category") not in (None, ""):
            try:
                given = int(row["category"])
            except ValueError:
                raise InputError(f"{where}: category {row['category']!r} is not 1, 2 or 3") from None
            if given != computed:
                raise InputError(f"{where}: category {given} does not match the pair "
                                 f"(its verbs and objects make it category {computed})")
        return computed

    @staticmethod
    def _add_numbers(row: dict, fields: dict, where: str) -> None:
        """The numeric columns given (each within its range), and the whole-number level."""
        for field, (lo, hi) in NUMERIC.items():
            if row.get(field) not in (None, ""):
                try:
                    number = float(row[field])
                except ValueError:
                    raise InputError(f"{where}: {field} {row[field]!r} is not a number") from None
                if not (lo <= number <= hi) or math.isnan(number):
                    raise InputError(f"{where}: {field} {number} is outside [{lo}, {hi}]")
                fields[field] = number
        if row.get("level") not in (None, ""):
            try:
                fields["level"] = int(row["level"])
            except ValueError:
                raise InputError(f"{where}: level {row['level']!r} is not a whole number") from None

    def normalize_item(self, row: dict, where: str) -> dict:
        if "gt_verb_synset" in row and "similarity_level" in row:
            row = self.from_shoe_row(row)
        dataset = check_dataset(dataset_of(row), where)
        fields, display = self._slot_fields(row, where, dataset)
        fields["category"] = self._checked_category(row, fields, where)
        self._add_numbers(row, fields, where)
        known = {f for f, _ in SLOTS} | set(NUMERIC) | {"category", "level", "gt_verb_label",
                                                        "gt_object_label", "dataset"}
        for key, value in row.items():
            if key not in known and key not in ("item_id", "role", "expected") and value not in (None, ""):
                fields[key] = str(value)
        if dataset != datasets.DEFAULT:  # the default dataset is not named in an item
            fields["dataset"] = dataset
        fields["display"] = {**display, **{f"{f}_gloss": gloss(fields[f]) for f, _ in SLOTS}}
        return fields

    def shown_senses(self, fields: dict) -> list[str]:
        """The four synsets of the pair (ground truth and prediction, verb and object)."""
        return [fields[f] for f, _ in SLOTS]

    def export_item(self, fields: dict) -> dict:
        """The item's fields; ``verb_sim`` / ``object_sim`` only when known (items.csv has the
        columns when an item has them, and leaves them out when none does)."""
        out = {k: v for k, v in fields.items() if k != "display"}
        out.setdefault("level", None)
        return out

    def sample_items(self, options: dict, base_dir: Path, tables_of):
        def matrix(key: str):
            return SimilarityMatrix.load(base_dir / options[key]) if key in options else None

        dataset = options.get("dataset")
        try:
            categories = sampler.check_categories(options.get("categories", (1, 2, 3)))
        except InputError as exc:
            raise InputError(f"key 'items.categories' {str(exc).removeprefix('categories ')}") from None
        weights = None
        if "class_weights" in options:
            weights = sampler.load_class_weights(base_dir / options["class_weights"],
                                                 datasets.load_vocabulary(dataset))
        items, report = sampler.sample_pairs(
            options.get("n", 500), options.get("seed", 0), verb_matrix=matrix("verb_sim"),
            object_matrix=matrix("object_sim"), class_weights=weights, w=options.get("w", 0.5),
            redistribute=options.get("redistribute", True), dataset=dataset, categories=categories,
            closed_vocabulary=options.get("closed_vocabulary"), exclude_senses=options.get("exclude_senses", ()))
        return items, report.text()

    def attention_items(self, items: list[dict], count: int) -> list[tuple[dict, str]]:
        """A ground truth paired with itself, to be rated 4 (interchangeable)."""
        out, seen = [], set()
        for fields in items:
            gt = (fields["gt_verb"], fields["gt_object"])
            if gt in seen:
                continue
            seen.add(gt)
            row = {"gt_verb": gt[0], "gt_object": gt[1], "pred_verb": gt[0], "pred_object": gt[1],
                   "gt_verb_label": fields.get("gt_verb_label", ""),
                   "gt_object_label": fields.get("gt_object_label", ""),
                   "dataset": fields.get("dataset", "")}
            out.append((self.normalize_item(row, "attention check"), "4"))
            if len(out) == count:
                break
        return out

    def simulated_scores(self, fields_list: list[dict]) -> list[float]:
        """``4 · (w·v + (1 − w)·o)`` with w = 0.5, v and o from the item's ``verb_sim`` /
        ``object_sim`` when it has them, else from the baseline matrices of its dataset."""
        matrices: dict[str, tuple] = {}
        out = []
        for fields in fields_list:
            dataset = dataset_of(fields)
            if dataset not in matrices:
                matrices[dataset] = baseline_matrices(dataset)
            out.append(latent_similarity(fields, *matrices[dataset]))
        return out

    def report_analyses(self, items: pd.DataFrame, ratings: pd.DataFrame, permutations: int):
        from .analysis import pair_analyses

        return pair_analyses(items, ratings, permutations)

    def dashboard_sections(self, slug: str, tables: dict, fields_by_key: dict, resamples: int) -> list[Section]:
        """Metric–human alignment (overall and per category) and w tuned per category."""
        from metrics.study import alignment_frame, validate_ratings

        from .analysis import pair_analyses

        ratings = tables["ratings.csv"]
        ratings = ratings[ratings["phase"] == "main"]
        if ratings.empty:
            raise InputError("no main ratings yet: alignment and w need rated items")
        alignment, tuning = pair_analyses(tables["items.csv"], validate_ratings(ratings, source="ratings"), resamples)
        frames = {"all items": alignment_frame(alignment)}
        for category, per in alignment.get("by_category", {}).items():
            frames[f"category {category}"] = alignment_frame({"metrics": per})
        w = pd.DataFrame({"w": tuning["w_by_category"], "mae": tuning["mae_by_category"],
                          "items": tuning["n_by_category"]}).rename_axis("category").reset_index()
        return [Section("Metric–human alignment",
                        f"Eq. 13 agreement and Spearman ρ of each baseline with the mean rating "
                        f"(Fisher interval; permutation p from {resamples} permutations).", frames),
                Section("w per category (Eq. 14)",
                        f"Overall w = {tuning['w_overall']:.3f}; agreement with category-tuned w "
                        f"{tuning['agreement_tuned']:.4f}, with w = 0.5 {tuning['agreement_w05']:.4f}.",
                        {"w": w})]
