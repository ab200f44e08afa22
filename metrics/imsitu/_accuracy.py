"""imSitu verb predictions: sense-aware accuracy, its improvement breakdown, human accuracy and
the alignment of automatic criteria with human judgment.

Source: Yao, Jarvis & Jiang, *Towards Robust Evaluation of Visual Activity Recognition:
Resolving Verb Ambiguity with Sense Clustering* (§4.1–4.2, Tables 3–6, Appendix D). The sense
clusters themselves are built by :mod:`metrics.imsitu._sense_clusters` (Algorithm 1, Appendix G).

Inputs (docs/contracts.md, "Other inputs"):

- gold: ``{image: verb}`` or ``{image: [verbs]}``;
- predictions: ``{image: [verb, ...]}`` ranked best first (imSitu gerunds, ``jumping``), or a
  folder of imSitu ``*.predictions`` files (a JSON list of ``{"verb", "score", "frames"}``;
  ranked here by descending score, ties in file order);
- clusters: ``{"clusters": {cluster_id: [verbs]}, "images": {image: [cluster_ids]}}``.

Three criteria decide whether a predicted verb ``p`` is correct for an image (§4.2):

- ``gold``: ``p`` equals a gold verb (after lower-casing and stripping; no lemmatization, so
  ``jumping`` and ``jump`` differ — imSitu uses gerunds throughout);
- ``wn_syn``: ``p`` and a gold verb share a WordNet verb synset, each verb taken through every
  morphological base form WordNet allows (``jumping`` → ``jump``, ``lying`` → ``lie``,
  ``riding`` → ``ride`` and ``rid``); an exact match counts too, so WN-Syn ≥ Gold even for a verb
  WordNet lacks;
- ``cluster``: as the paper defines it (§4.2), ``p`` is correct iff it appears in one of the
  sense clusters that contain the image. ``include_gold=True`` (``--include-gold``) adds the
  image's gold verbs to its targets as well, which keeps Cluster ≥ Gold with clusters built
  elsewhere; ``n_gold_outside_clusters`` counts the images whose gold verb is in none of their
  clusters (where the two readings can differ). With clusters built by Algorithm 1 every gold
  verb is one of the image's nodes (§3.1), so the count is 0 and the readings agree.

Top-1 accuracy is the share of images whose first prediction is correct, Top-5 the share with a
correct verb among the first five. Gold images without predictions count as wrong
(``n_missing_predictions``); predictions for images without gold are ignored
(``n_extra_predictions``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.core._inputs import check_readable, numbers, read_json, refuse_first_row, require_columns
from metrics.core._intervals import bootstrap_mean_interval
from metrics.core._validation import check_whole
from metrics.vocab import _wordnet as wordnet

CRITERIA = ("gold", "wn_syn", "cluster")


def normalize_verb(verb) -> str:
    """The comparison form of a verb: lower case, outer spaces removed."""
    return str(verb).strip().lower()


@lru_cache(maxsize=100_000)
def base_forms(verb: str) -> tuple[str, ...]:
    """Every WordNet base form of a (gerund) verb, most frequent first; the word itself when
    WordNet knows none.

    >>> base_forms("jumping"), base_forms("lying")
    (('jump',), ('lie',))
    """
    word = normalize_verb(verb)
    return wordnet.lemma_candidates(word, "v") or (word,)


@lru_cache(maxsize=100_000)
def verb_synsets(verb: str) -> frozenset[str]:
    """WordNet verb synsets of a verb, over all its base forms (``riding``: ride's and rid's)."""
    return frozenset(s for form in base_forms(verb) for s in wordnet.synsets(form, "v"))


def wn_synonyms(a: str, b: str) -> bool:
    """True when two verbs are equal or share a WordNet verb synset after lemmatization.

    >>> wn_synonyms("jumping", "leaping"), wn_synonyms("jumping", "sleeping")
    (True, False)
    """
    a, b = normalize_verb(a), normalize_verb(b)
    return a == b or not verb_synsets(a).isdisjoint(verb_synsets(b))


# ---------------------------------------------------------------------------------- reading
def _verb_list(value, where: str, allow_empty: bool) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(f"{where} must be a verb or a list of non-empty verb strings, got {value!r:.80}")
    if not value and not allow_empty:
        raise InputError(f"{where} is an empty list")
    return [normalize_verb(v) for v in value]


def parse_gold(data, source: str = "gold") -> dict[str, tuple[str, ...]]:
    """``{image: verb | [verbs]}`` → ``{image: (verbs,)}`` (validated)."""
    if not isinstance(data, dict) or not data:
        raise InputError(f"{source}: expected a JSON object mapping images to gold verbs")
    return {str(image): tuple(dict.fromkeys(_verb_list(v, f"{source}: image {image!r}: gold", False)))
            for image, v in data.items()}


def parse_predictions(data, *, source: str = "pred") -> dict[str, list[str]]:
    """``{image: [ranked verbs]}`` (validated)."""
    if not isinstance(data, dict) or not data:
        raise InputError(f"{source}: expected a JSON object mapping images to ranked verb lists")
    out = {}
    for image, verbs in data.items():
        if isinstance(verbs, str):
            raise InputError(f"{source}: image {image!r}: predictions must be a list of verbs, got a string")
        out[str(image)] = _verb_list(verbs, f"{source}: image {image!r}: predictions", True)
    return out


def read_gold(path) -> dict[str, tuple[str, ...]]:
    return parse_gold(read_json(path), str(path))


def read_predictions(path) -> dict[str, list[str]]:
    """Ranked predictions from a JSON file or a folder of imSitu ``*.predictions`` files."""
    path = Path(path)
    if path.is_dir():
        return read_examples_predictions(path)
    return parse_predictions(read_json(path), source=str(path))


def read_prediction_file(path) -> list[str]:
    """Verbs of one imSitu ``.predictions`` file ranked by descending score (stable)."""
    data = read_json(path)
    if not isinstance(data, list) or not data:
        raise InputError(f"{path}: expected a non-empty JSON list of {{'verb', 'score'}} objects")
    rows = []
    for k, entry in enumerate(data):
        if not isinstance(entry, dict) or not isinstance(entry.get("verb"), str) or not entry["verb"].strip():
            raise InputError(f"{path}: entry {k}: needs a non-empty 'verb' string")
        score = entry.get("score", 0.0)
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise InputError(f"{path}: entry {k}: 'score' must be a finite number, got {score!r}")
        rows.append((-float(score), k, normalize_verb(entry["verb"])))
    return [verb for _, _, verb in sorted(rows)]


def examples_image_name(prediction_file: Path) -> str:
    """``jumping_10.predictions`` → ``jumping_10.jpg`` (the imSitu image it describes)."""
    return prediction_file.stem + ".jpg"


def read_examples_predictions(folder) -> dict[str, list[str]]:
    """``{image: ranked verbs}`` of every ``*.predictions`` file in ``folder``."""
    files = sorted(Path(folder).glob("*.predictions"))
    if not files:
        raise InputError(f"{folder}: no *.predictions files")
    return {examples_image_name(f): read_prediction_file(f) for f in files}


def gold_from_image_names(images) -> dict[str, tuple[str, ...]]:
    """imSitu names images ``<gold verb>_<n>.jpg``: ``jumping_10.jpg`` → ``("jumping",)``."""
    out: dict[str, tuple[str, ...]] = {}
    for image in images:
        stem = Path(image).stem
        verb, sep, number = stem.rpartition("_")
        if not sep or not verb or not number.isdigit():
            raise InputError(f"image {image!r}: not an imSitu name <verb>_<number>.jpg, so no gold verb")
        out[image] = (normalize_verb(verb),)
    return out


@dataclass(frozen=True)
class SenseClusters:
    """Sense clusters: verbs per cluster and clusters per image."""

    clusters: dict[str, frozenset[str]]
    images: dict[str, tuple[str, ...]]
    meta: dict = field(default_factory=dict)

    def image_verbs(self, image: str) -> frozenset[str]:
        """Every verb of every cluster that contains the image."""
        return frozenset().union(*(self.clusters[c] for c in self.images.get(image, ())))

    def to_dict(self) -> dict:
        out = {"clusters": {c: sorted(v) for c, v in self.clusters.items()},
               "images": {i: list(c) for i, c in self.images.items()}}
        if self.meta:
            out["meta"] = self.meta
        return out


def parse_clusters(data, source: str = "clusters") -> SenseClusters:
    if not isinstance(data, dict) or not isinstance(data.get("clusters"), dict) \
            or not isinstance(data.get("images"), dict):
        raise InputError(f"{source}: expected {{'clusters': {{id: [verbs]}}, 'images': {{image: [ids]}}}}")
    clusters = {str(c): frozenset(_verb_list(v, f"{source}: cluster {c!r}", False))
                for c, v in data["clusters"].items()}
    images = {}
    for image, ids in data["images"].items():
        if not isinstance(ids, list):
            raise InputError(f"{source}: image {image!r}: expected a list of cluster ids, got {ids!r:.60}")
        for c in ids:
            if str(c) not in clusters:
                raise InputError(f"{source}: image {image!r}: unknown cluster id {c!r}")
        images[str(image)] = tuple(dict.fromkeys(str(c) for c in ids))
    meta = data["meta"] if isinstance(data.get("meta"), dict) else {}
    return SenseClusters(clusters, images, meta)


def read_clusters(path) -> SenseClusters:
    return parse_clusters(read_json(path), str(path))


# ---------------------------------------------------------------------------------- accuracy
def _as_gold(gold: dict) -> dict[str, tuple[str, ...]]:
    """Gold as ``{image: (verbs,)}``, parsing plain ``{image: verb}`` dicts."""
    if all(isinstance(v, tuple) for v in gold.values()):
        return gold
    return parse_gold(gold)


def _as_pred(pred: dict) -> dict[str, list[str]]:
    return {image: [normalize_verb(v) for v in verbs] for image, verbs in pred.items()}


def _targets(gold: tuple[str, ...], image: str, clusters: SenseClusters | None, include_gold: bool):
    """(verbs of the image's clusters (∪ gold with ``include_gold``), verbs sharing a cluster of
    the image with a gold verb)."""
    if clusters is None:
        return None, None
    ids = clusters.images.get(image, ())
    in_image = clusters.image_verbs(image) | (set(gold) if include_gold else set())
    with_gold = frozenset(set(gold).union(*(clusters.clusters[c] for c in ids
                                            if not clusters.clusters[c].isdisjoint(gold))))
    return in_image, with_gold


def prediction_marks(gold: dict, pred: dict, clusters: SenseClusters | None = None,
                     k: int = 5, *, include_gold: bool = False) -> tuple[list[str], dict[str, np.ndarray]]:
    """Per-prediction correctness: (images, {criterion: bool array images × k}).

    Columns are ranks 1..k; a list shorter than k leaves the rest False; ``cluster`` is present
    only with clusters. An extra array ``cluster_same_as_gold`` marks predictions that share a
    cluster of the image with a gold verb (the synonym part of Table 4).

    >>> images, m = prediction_marks({"a.jpg": "jumping"}, {"a.jpg": ["leaping", "sleeping"]}, k=2)
    >>> m["gold"].tolist(), m["wn_syn"].tolist()
    ([[False, False]], [[True, False]])
    """
    check_whole("k", k, 1)
    gold, pred = _as_gold(gold), _as_pred(pred)
    images = list(gold)
    n = len(images)
    marks = {c: np.zeros((n, k), dtype=bool) for c in CRITERIA if c != "cluster" or clusters}
    if clusters is not None:
        marks["cluster_same_as_gold"] = np.zeros((n, k), dtype=bool)
    for i, image in enumerate(images):
        golds = gold[image]
        in_image, with_gold = _targets(golds, image, clusters, include_gold)
        for r, verb in enumerate(pred.get(image, [])[:k]):
            marks["gold"][i, r] = verb in golds
            marks["wn_syn"][i, r] = any(wn_synonyms(verb, g) for g in golds)
            if clusters is not None:
                marks["cluster"][i, r] = verb in in_image
                marks["cluster_same_as_gold"][i, r] = verb in with_gold
    return images, marks


def topk_accuracy(marks: np.ndarray, k: int) -> float:
    """Share of rows with a True among the first k columns (Top-k accuracy)."""
    if len(marks) == 0:
        return float("nan")
    return float(marks[:, :k].any(axis=1).mean())


def sense_accuracy_tables(gold: dict, pred: dict, clusters: SenseClusters | None = None, *,
                   include_gold: bool = False) -> dict:
    """Top-1 / Top-5 accuracy under the gold, WordNet-synonym and cluster criteria (Table 3)
    and the Top-1 improvement breakdown (Table 4).

    Breakdown: of the images whose first prediction is correct under clusters but not under
    gold, ``synonym`` counts those whose prediction shares a cluster of the image with the gold
    verb and ``multi_perspective`` the rest (in another cluster of the image). Both are
    reported as fractions of all images (the paper's "+3.9 / +8.8", which add up to
    Cluster − Gold) and as shares of the improvement (``share_*``).

    >>> g = {"a.jpg": "jumping", "b.jpg": "lying"}
    >>> p = {"a.jpg": ["leaping", "jumping"], "b.jpg": ["sleeping"]}
    >>> r = sense_accuracy_tables(g, p)
    >>> r["gold"], r["wn_syn"]
    ({'top1': 0.0, 'top5': 0.5}, {'top1': 0.5, 'top5': 0.5})
    """
    if not gold:
        raise InputError("no gold images")
    gold, pred = _as_gold(gold), _as_pred(pred)
    scored = set(gold) & set(pred)
    if not scored:
        raise InputError("no image of the predictions has a gold verb (check the image names)")
    images, marks = prediction_marks(gold, pred, clusters, k=5, include_gold=include_gold)
    result: dict = {name: {"top1": topk_accuracy(m, 1), "top5": topk_accuracy(m, 5)}
                    for name, m in marks.items() if name in CRITERIA}
    result.setdefault("cluster", None)
    result["breakdown"] = None
    if clusters is not None:
        gain = marks["cluster"][:, 0] & ~marks["gold"][:, 0]
        synonym = gain & marks["cluster_same_as_gold"][:, 0]
        multi = gain & ~marks["cluster_same_as_gold"][:, 0]
        n_gain = int(gain.sum())
        result["breakdown"] = {
            "synonym": float(synonym.mean()), "multi_perspective": float(multi.mean()),
            "n_synonym": int(synonym.sum()), "n_multi_perspective": int(multi.sum()),
            "share_synonym": synonym.sum() / n_gain if n_gain else None,
            "share_multi_perspective": multi.sum() / n_gain if n_gain else None,
        }
        result["n_images_without_clusters"] = sum(1 for i in images if not clusters.images.get(i))
        result["n_gold_outside_clusters"] = sum(
            1 for i in images if set(gold[i]).isdisjoint(clusters.image_verbs(i)))
        result["include_gold"] = include_gold
    result["n_images"] = len(images)
    result["n_missing_predictions"] = len(set(gold) - scored)
    result["n_extra_predictions"] = len(set(pred) - scored)
    return result


def accuracy_text(result: dict) -> str:
    """The readable table of :func:`sense_accuracy_tables`."""
    lines = [f"{result['n_images']} images ({result['n_missing_predictions']} without predictions, "
             f"{result['n_extra_predictions']} predictions without gold ignored)",
             f"{'criterion':<10} {'Top-1':>7} {'Top-5':>7}"]
    for name, label in (("gold", "Gold"), ("wn_syn", "WN-Syn"), ("cluster", "Cluster")):
        if result.get(name):
            lines.append(f"{label:<10} {result[name]['top1']:7.3f} {result[name]['top5']:7.3f}")
    if result.get("cluster"):
        lines.append(f"cluster criterion: {'image clusters + gold verbs (--include-gold)' if result['include_gold'] else 'image clusters only (paper §4.2)'}; "
                     f"{result['n_gold_outside_clusters']} images whose gold verb is in none of their clusters")
    b = result.get("breakdown")
    if b:
        lines.append(f"Top-1 gain over Gold: synonym +{b['synonym']:.3f} ({b['n_synonym']} images), "
                     f"multi-perspective +{b['multi_perspective']:.3f} ({b['n_multi_perspective']} images)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- humans
def parse_marks(value, n: int, where: str) -> np.ndarray:
    """A stored correctness response (``"10100"``: rank 1 and 3 correct) → bool array of n."""
    text = str(value).strip()
    if len(text) != n or set(text) - {"0", "1"}:
        raise InputError(f"{where}: response {text!r} must be {n} characters of 0 / 1 "
                         "(one per shown prediction)")
    return np.frombuffer(text.encode(), dtype=np.uint8) == ord("1")


def majority_labels(labels: pd.DataFrame) -> pd.DataFrame:
    """Majority over annotators of per-prediction marks.

    ``labels``: long form ``model, image, rank, annotator, correct`` (rank 1-based, correct
    0/1). A prediction is correct when more than half of its annotators marked it so (a tie
    counts as incorrect). Returns ``model, image, top1, top5, n_annotators``: ``top1`` the
    first prediction's label, ``top5`` whether any of ranks 1–5 is correct.
    """
    require_columns(labels.columns, ("model", "image", "rank", "annotator", "correct"), "human labels")
    grouped = labels.groupby(["model", "image", "rank"], sort=True).agg(
        share=("correct", "mean"), n=("annotator", "nunique")).reset_index()
    grouped["correct"] = grouped["share"] > 0.5
    return _topk_table(grouped, extra={"n_annotators": ("n", "max")})


def _topk_table(per_rank: pd.DataFrame, extra: dict | None = None) -> pd.DataFrame:
    """``model, image, rank, correct`` → ``model, image, top1, top5``."""
    per_rank = per_rank.assign(top1=(per_rank["rank"] == 1) & per_rank["correct"],
                               top5=(per_rank["rank"] <= 5) & per_rank["correct"])
    return per_rank.groupby(["model", "image"], sort=True).agg(
        top1=("top1", "any"), top5=("top5", "any"), **(extra or {})).reset_index()


def human_accuracy(table: pd.DataFrame, *, n_resamples: int = 1000, seed: int = 0) -> dict:
    """Human Top-1 / Top-5 accuracy per model with percentile bootstrap intervals over images.

    ``table``: ``model, image, top1, top5`` (e.g. :func:`majority_labels`). Returns
    ``{model: {"top1", "top5", "top1_ci", "top5_ci", "n_images"}}``.
    """
    out = {}
    for model, rows in table.groupby("model", sort=True):
        entry: dict = {"n_images": int(len(rows))}
        for key in ("top1", "top5"):
            values = rows[key].to_numpy(dtype=float)
            entry[key] = float(values.mean())
            entry[f"{key}_ci"] = list(bootstrap_mean_interval(values, n_resamples=n_resamples, seed=seed))
        out[str(model)] = entry
    return out


def criterion_tables(items: pd.DataFrame, gold: dict, clusters: SenseClusters | None = None, *,
                     gold_source: str = "the gold verbs") -> dict[str, pd.DataFrame]:
    """``model, image, top1, top5`` of each automatic criterion for the rated predictions.

    ``items``: ``model, image, predictions`` (a list of ranked verbs each); ``gold_source``
    names where ``gold`` comes from in a refusal (an image without a gold verb).
    """
    out: dict[str, list] = {}
    for model, rows in items.groupby("model", sort=True):
        images = list(rows["image"])
        missing = [i for i in images if i not in gold]
        if missing:
            raise InputError(f"{gold_source}: no gold verb for image {missing[0]!r} (rated for model {model!r})")
        pred = dict(zip(images, rows["predictions"]))
        _, marks = prediction_marks({i: gold[i] for i in images}, pred, clusters, k=5)
        for name in CRITERIA:
            if name in marks:
                out.setdefault(name, []).append(pd.DataFrame({
                    "model": model, "image": images, "top1": marks[name][:, 0],
                    "top5": marks[name][:, :5].any(axis=1)}))
    return {name: pd.concat(parts, ignore_index=True) for name, parts in out.items()}


def read_judge(path, name: str) -> pd.DataFrame:
    """An extra judge's labels (CSV): ``model, image, top1, top5`` (0/1, yes/no, true/false),
    or per prediction ``model, image, rank, correct``."""
    from metrics.core._inputs import read_csv

    try:
        frame = read_csv(check_readable(path))
    except InputError as exc:
        raise InputError(f"--judge {name}: {exc}") from None
    columns = set(frame.columns)

    def boolean(column: str) -> pd.Series:
        text = frame[column].str.strip().str.lower()
        known = {"1": True, "0": False, "yes": True, "no": False, "true": True, "false": False}
        refuse_first_row(path, ~text.isin(list(known)),
                         lambda k: f"{column} {frame[column].iloc[k]!r} is not 0/1, yes/no or true/false")
        return text.map(known).astype(bool)

    if {"model", "image", "top1", "top5"} <= columns:
        return pd.DataFrame({"model": frame["model"], "image": frame["image"],
                             "top1": boolean("top1"), "top5": boolean("top5")})
    if {"model", "image", "rank", "correct"} <= columns:
        ranks = numbers(frame["rank"])
        refuse_first_row(path, ranks.isna() | (ranks < 1),
                         lambda k: f"rank {frame['rank'].iloc[k]!r} is not a whole number ≥ 1")
        per_rank = pd.DataFrame({"model": frame["model"], "image": frame["image"],
                                 "rank": ranks.astype(int), "correct": boolean("correct")})
        return _topk_table(per_rank)
    raise InputError(f"{path}: needs columns model,image,top1,top5 or model,image,rank,correct")


def alignment_table(human: pd.DataFrame, criteria: dict[str, pd.DataFrame]) -> dict:
    """How each criterion agrees with human judgment (Tables 5–6).

    For each criterion and each of Top-1 / Top-5: its accuracy per model and the difference
    from the human accuracy (Table 5); Kendall's τ-b (``scipy.stats.kendalltau``) between the
    model accuracies it gives and the human ones (Table 6: ranking agreement, App. D.2); and
    Krippendorff's α (nominal, two coders: the criterion and the human majority) over the
    (model, image) units, whose label is "the first prediction is correct" for Top-1 and "one
    of the first five is correct" for Top-5 — the unit the LLM judges of App. D.1 answer for.
    τ is None with fewer than two models or a constant ranking; α is None when undefined.

    Returns ``{"human": {model: {top1, top5}}, "models": [...], "criteria": {name: {"top1":
    {"accuracy", "difference", "kendall_tau", "krippendorff_alpha"}, "top5": {...}}}}``.
    """
    from scipy.stats import kendalltau

    from metrics.study._agreement import alpha_of_matrix

    key = ["model", "image"]
    human = human[key + ["top1", "top5"]].sort_values(key).reset_index(drop=True)
    models = sorted(human["model"].unique().tolist())
    human_acc = human.groupby("model")[["top1", "top5"]].mean()
    out: dict = {"models": models, "n_units": int(len(human)),
           "human": {m: {t: float(human_acc.loc[m, t]) for t in ("top1", "top5")} for m in models},
           "criteria": {}}
    for name, table in criteria.items():
        joined = human.merge(table[key + ["top1", "top5"]], on=key, how="left",
                             suffixes=("_human", ""), indicator=True)
        lacking = joined[joined["_merge"] != "both"]
        if len(lacking):
            row = lacking.iloc[0]
            raise InputError(f"criterion {name}: no label for model {row['model']!r}, image {row['image']!r}")
        entry: dict = {}
        for t in ("top1", "top5"):
            acc = joined.groupby("model")[t].mean().reindex(models).astype(float)
            ref = human_acc[t].reindex(models).astype(float)
            tau: float | None = None
            if len(models) >= 2 and acc.nunique() > 1 and ref.nunique() > 1:
                tau = float(kendalltau(acc.to_numpy(), ref.to_numpy()).statistic)
            pair = pd.DataFrame({"criterion": joined[t].astype(int), "human": joined[f"{t}_human"].astype(int)})
            try:
                value = alpha_of_matrix(pair, level="nominal", scale=(0, 1))
                alpha = value if math.isfinite(value) else None
            except (ValueError, ZeroDivisionError):
                alpha = None
            entry[t] = {"accuracy": {m: float(acc[m]) for m in models},
                        "difference": {m: float(acc[m] - ref[m]) for m in models},
                        "kendall_tau": tau, "krippendorff_alpha": alpha}
        out["criteria"][name] = entry
    return out


def alignment_text(result: dict) -> str:
    """Tables 5 and 6 as text."""
    models = result["models"]
    names = list(result["criteria"])
    lines = []
    for t, title in (("top1", "Top-1"), ("top5", "Top-5")):
        lines.append(f"{title} accuracy (difference from human)")
        lines.append(f"{'model':<24}" + "".join(f"{n:>16}" for n in names) + f"{'human':>9}")
        for m in models:
            cells = "".join(f"{result['criteria'][n][t]['accuracy'][m]:9.3f} ({result['criteria'][n][t]['difference'][m]:+.2f})"
                            for n in names)
            lines.append(f"{m:<24}{cells}{result['human'][m][t]:9.3f}")
        lines.append("")
    lines.append(f"{'criterion':<16}{'tau Top-1':>11}{'tau Top-5':>11}{'alpha Top-1':>13}{'alpha Top-5':>13}")

    def fmt(v, width):
        return f"{v:{width}.3f}" if v is not None else f"{'—':>{width}}"
    for n in names:
        c = result["criteria"][n]
        lines.append(f"{n:<16}{fmt(c['top1']['kendall_tau'], 11)}{fmt(c['top5']['kendall_tau'], 11)}"
                     f"{fmt(c['top1']['krippendorff_alpha'], 13)}{fmt(c['top5']['krippendorff_alpha'], 13)}")
    return "\n".join(lines)


def study_human_labels(ratings: pd.DataFrame, items: pd.DataFrame, *, source: str = "ratings",
                       items_source: str = "the items") -> pd.DataFrame:
    """Long-form human labels from a correctness study's exports.

    ``ratings``: ``item_id, annotator, rating`` (the marks string, e.g. ``"10100"``; ``phase``
    other than ``main`` is dropped when present); ``items``: ``item_id, model, image,
    predictions`` (predictions a list, or a ``;``-joined string, of the shown verbs).
    ``source`` / ``items_source`` name the two tables in a refusal (their files, for a command).
    """
    if "phase" in ratings.columns:
        ratings = ratings[ratings["phase"].fillna("main") == "main"]
    require_columns(ratings.columns, ("item_id", "annotator", "rating"), source)
    items = items.set_index(items["item_id"].astype(str))
    rows = []
    for record in ratings.itertuples(index=False):
        key = str(record.item_id)
        if key not in items.index:
            raise InputError(f"{source}: item {key!r} is not in {items_source}")
        item = items.loc[key]
        shown = split_verbs(item["predictions"])
        marks = parse_marks(record.rating, len(shown), f"{source}: item {key!r}, annotator {record.annotator!r}")
        for rank, correct in enumerate(marks, 1):
            rows.append((str(item["model"]), str(item["image"]), rank, str(record.annotator), int(correct)))
    if not rows:
        raise InputError(f"{source}: no main-phase ratings")
    return pd.DataFrame(rows, columns=["model", "image", "rank", "annotator", "correct"])


def align_study(ratings: pd.DataFrame, items: pd.DataFrame, gold: dict | None = None,
                clusters=None, judges: dict | None = None, *, n_resamples: int = 1000, seed: int = 0,
                ratings_source: str = "ratings", items_source: str = "the items",
                gold_source: str = "the gold verbs") -> dict:
    """Human accuracy per model and the alignment table (Tables 5–6) from a correctness study's
    exports: ``ratings`` (item_id, annotator, rating = marks) and ``items`` (item_id, model, image,
    predictions[, gold]); ``gold`` defaults to the items' gold column; ``judges`` adds extra
    criteria (tables ``model, image, top1, top5``, see :func:`read_judge`). The ``*_source``
    options name the three inputs in a refusal (a command passes its files)."""
    labels = study_human_labels(ratings, items, source=ratings_source, items_source=items_source)
    human = majority_labels(labels)
    if gold is None:
        if "gold" not in items.columns or (items["gold"].fillna("").astype(str).str.strip() == "").any():
            raise InputError(f"{items_source}: not every item has a gold verb (column gold); give --gold")
        gold, gold_source = {row.image: tuple(split_verbs(row.gold)) for row in items.itertuples()}, items_source
    rated = items.assign(predictions=items["predictions"].map(split_verbs))
    rated = rated[rated.set_index(["model", "image"]).index.isin(human.set_index(["model", "image"]).index)]
    criteria = criterion_tables(rated[["model", "image", "predictions"]], gold, clusters, gold_source=gold_source)
    for name, table in (judges or {}).items():
        criteria[name] = table
    result = alignment_table(human, criteria)
    result["human_accuracy"] = human_accuracy(human, n_resamples=n_resamples, seed=seed)
    result["n_annotators"] = int(labels["annotator"].nunique())
    return result


def split_verbs(value) -> list[str]:
    """A list of verbs, or a ``;``-joined string of them."""
    if isinstance(value, (list, tuple)):
        return [normalize_verb(v) for v in value]
    return [normalize_verb(v) for v in str(value).split(";") if v.strip()]
