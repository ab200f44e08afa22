"""Human correctness marks of imSitu predictions and how the automatic criteria agree with them.

Source: Yao, Jarvis & Jiang (§4.3, Tables 5–6, Appendix D): human accuracy per model (majority
over annotators, bootstrap intervals), the accuracy each criterion gives and its difference from
the human one (Table 5), Kendall's τ of the model rankings and Krippendorff's α of the labels
(Table 6), with extra judges (App. D.1) read from CSV.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from metrics.core._constraints import RANDOM_SEED, Whole, validate_params
from metrics.core._errors import InputError
from metrics.core._inputs import check_readable, numbers, refuse_first_row, require_columns
from metrics.core._intervals import bootstrap_mean_interval
from metrics.imsitu._accuracy import CRITERIA, prediction_marks
from metrics.imsitu._cluster_files import SenseClusters
from metrics.imsitu._readers import split_verbs

BOOTSTRAP = {"n_resamples": Whole(1), "seed": RANDOM_SEED}   # the bootstrap intervals of human accuracy


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


@validate_params(BOOTSTRAP)
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


@validate_params(BOOTSTRAP)
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
