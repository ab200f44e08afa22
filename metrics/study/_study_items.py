"""Items of an HOI-similarity study (``items.csv`` of docs/contracts.md) joined with their ratings.

An item pairs a ground-truth HOI (``gt_verb, gt_object``) with a predicted one
(``pred_verb, pred_object``); each may be a dataset label or a synset name. ``category`` is 1
(same verb, different object), 2 (different verb, same object) or 3 (both different).
``verb_sim`` / ``object_sim`` (in [0, 1]) come from the file when present, otherwise from
similarity matrices looked up on the items' synsets. A ``dataset`` column (a study over another
dataset than HICO-DET exports one) names the dataset whose labels the items use; without it
labels are HICO-DET's.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from metrics.core._errors import InputError
from metrics.core._inputs import numbers, read_csv, refuse_first_row, require_columns
from metrics.core._vocabulary import Vocabulary
from metrics.vocab._matching import resolve
from metrics.vocab._similarity import SimilarityMatrix

HOI_COLUMNS = ("gt_verb", "gt_object", "pred_verb", "pred_object")


def read_items(path: str | Path) -> pd.DataFrame:
    """Read ``items.csv``; ``item_id`` is required, every other column is optional."""
    df = read_csv(path, required=("item_id",), dtype={"item_id": str}, keep_default_na=False,
                  na_values=[""])
    return validate_items(df, str(path))


def validate_items(df: pd.DataFrame, source: str = "items") -> pd.DataFrame:
    """The items of an HOI-similarity study, checked (``source`` names them in messages): a
    unique, non-empty ``item_id``; ``category`` 1–3 and ``verb_sim`` / ``object_sim`` in [0, 1]
    where present (an empty similarity is looked up later)."""
    require_columns(df.columns, ("item_id",), source)
    df = df.copy()
    if df.empty:
        raise InputError(f"{source}: no items (only a header)")
    refuse_first_row(source, df["item_id"].isna() | (df["item_id"].astype(str).str.strip() == ""),
                     lambda k: "empty item_id")
    refuse_first_row(source, df["item_id"].duplicated(), lambda k: f"duplicate item_id {df['item_id'].iloc[k]!r}")
    if "category" in df.columns:
        cat = numbers(df["category"])
        refuse_first_row(source, ~cat.isin([1, 2, 3]),
                         lambda k: f"category {str(df['category'].iloc[k])!r} is not 1, 2 or 3")
        df["category"] = cat.astype(int)
    for column in ("verb_sim", "object_sim"):
        if column in df.columns:
            values = numbers(df[column])  # an empty cell: look it up
            refuse_first_row(source, (values.isna() & df[column].notna()) | (values < 0) | (values > 1),
                             lambda k, column=column: f"{column} {str(df[column].iloc[k])!r} is not in [0, 1]")
            df[column] = values.astype(float)
    df["item_id"] = df["item_id"].astype(str)
    return df


def check_rated_items(items: pd.DataFrame, ratings: pd.DataFrame, items_source: str,
                      ratings_source: str) -> None:
    """Every rated item must be in the items file (a rating of an unknown item is refused,
    naming its line in the ratings file)."""
    refuse_first_row(ratings_source, ~ratings["item_id"].astype(str).isin(set(items["item_id"].astype(str))),
                     lambda k: f"item_id {ratings['item_id'].iloc[k]!r} is not in {items_source}")


def items_dataset(items: pd.DataFrame, *, source: str = "items") -> str | None:
    """The dataset named by the items' ``dataset`` column (None without one, or when empty).

    >>> items_dataset(pd.DataFrame({"item_id": ["a"], "dataset": ["vcoco"]}))
    'vcoco'
    >>> items_dataset(pd.DataFrame({"item_id": ["a", "b"], "dataset": ["vcoco", "hico-det"]}))
    Traceback (most recent call last):
    metrics.core._errors.InputError: items: column dataset names more than one dataset ('vcoco', 'hico-det')
    """
    if "dataset" not in items.columns:
        return None
    names = [str(v) for v in pd.unique(items["dataset"].dropna()) if str(v).strip()]
    if len(names) > 1:
        raise InputError(f"{source}: column dataset names more than one dataset ({names[0]!r}, {names[1]!r})")
    return names[0] if names else None


def item_synsets(items: pd.DataFrame, *, vocabulary: Vocabulary | None = None) -> pd.DataFrame:
    """Synset names of the four HOI columns (labels resolved through the vocabulary: by default
    that of the dataset the items' ``dataset`` column names, HICO-DET's without one)."""
    if vocabulary is None:
        from metrics import datasets
        vocabulary = datasets.load_vocabulary(items_dataset(items))
    require_columns(items.columns, HOI_COLUMNS, "items", why="needed to look up similarities")
    out = pd.DataFrame(index=items.index)
    for column in HOI_COLUMNS:
        pos = "v" if column.endswith("verb") else "n"
        cache = {text: resolve(str(text), pos, vocabulary=vocabulary) for text in pd.unique(items[column])}
        unknown = [t for t, s in cache.items() if s is None]
        if unknown:
            raise InputError(f"items: {column} {unknown[0]!r} has no WordNet synset")
        out[column] = items[column].map(cache)
    return out


def component_similarities(items: pd.DataFrame, verb_matrix: SimilarityMatrix | None = None,
                           object_matrix: SimilarityMatrix | None = None, *,
                           vocabulary: Vocabulary | None = None) -> pd.DataFrame:
    """``items`` with ``verb_sim`` and ``object_sim`` filled in from the matrices where absent."""
    out = items.copy()
    need = [c for c in ("verb_sim", "object_sim") if c not in out.columns or out[c].isna().any()]
    if not need:
        return out
    if verb_matrix is None or object_matrix is None:
        raise InputError(f"items lack {', '.join(need)}: give --verb-sim and --object-sim matrices")
    syn = item_synsets(items, vocabulary=vocabulary)
    looked_up = {
        "verb_sim": verb_matrix.sims(syn["pred_verb"].to_numpy(), syn["gt_verb"].to_numpy()),
        "object_sim": object_matrix.sims(syn["pred_object"].to_numpy(), syn["gt_object"].to_numpy()),
    }
    for column in need:
        if column in out.columns:
            out[column] = out[column].fillna(pd.Series(looked_up[column], index=out.index))
        else:
            out[column] = looked_up[column]
    return out


def mean_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per item: mean human rating (0–4) over annotators' latest ratings, and their count."""
    from metrics.study._agreement import rating_matrix

    matrix = rating_matrix(ratings)
    return pd.DataFrame({"item_id": matrix.index.astype(str),
                         "human_mean": matrix.mean(axis=1).to_numpy(),
                         "n_ratings": matrix.notna().sum(axis=1).to_numpy()})


def join_ratings(items: pd.DataFrame, ratings: pd.DataFrame) -> pd.DataFrame:
    """Items that have at least one rating, with ``human_mean`` and ``n_ratings``."""
    joined = items.merge(mean_ratings(ratings), on="item_id", how="inner")
    if joined.empty:
        raise InputError("no rated item: the ratings' item_id values match no item in the items file")
    return joined
