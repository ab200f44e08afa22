"""SHOE's study files: their column layout, the similarity levels of their candidate pool as
partial matrices, and how two similarity matrices agree on the pairs they share.

SHOE's layout (``majnoa/streamlit-annotation-app``, ``userstudy/``): ``image_id, gt_verb,
gt_object, gt_verb_synset, gt_object_synset, pred_verb_synset, pred_object_synset, category,
similarity_level``. ``similarity_level`` is the 0–4 SHOE rating of the *changed* component for
category 1 (same verb: the object pair) and 2 (same object: the verb pair), and the HOI level
for category 3.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.core._inputs import csv_rows, read_text, require_columns
from metrics.vocab._similarity import SimilarityMatrix

SHOE_COLUMNS = ("image_id", "gt_verb", "gt_object", "gt_verb_synset", "gt_object_synset",
                "pred_verb_synset", "pred_object_synset", "category", "similarity_level")
PARTIAL_NOTE = "SHOE similarity levels for these pairs only"


def is_shoe_layout(columns) -> bool:
    """Whether a CSV header is SHOE's study layout."""
    return set(SHOE_COLUMNS) <= set(columns)


def read_shoe_csv(path) -> pd.DataFrame:
    """Read a CSV in SHOE's layout; ``line`` holds each row's line in the file.

    Categories must be 1–3 and levels integers 0–4 (a one-line error names the line otherwise).
    """
    path = Path(path)
    header, records = csv_rows(read_text(path), str(path))
    require_columns(header, SHOE_COLUMNS, str(path), why=f"SHOE's layout: {', '.join(SHOE_COLUMNS)}")
    at = {c: header.index(c) for c in SHOE_COLUMNS}
    rows, lines = [], []
    for line, fields in records:
        fields = fields + [""] * (len(header) - len(fields))
        rows.append({c: fields[at[c]].strip() for c in SHOE_COLUMNS})
        lines.append(line)
    table = pd.DataFrame(rows, columns=list(SHOE_COLUMNS))
    table["line"] = lines
    for column, allowed in (("category", {"1", "2", "3"}), ("similarity_level", {"0", "1", "2", "3", "4"})):
        bad = ~table[column].isin(allowed)
        if bad.any():
            k = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{path}: line {table['line'].iloc[k]}: {column} {table[column].iloc[k]!r} "
                             f"is not one of {', '.join(sorted(allowed))}")
        table[column] = table[column].astype(int)
    for column in SHOE_COLUMNS[3:7]:
        empty = table[column] == ""
        if empty.any():
            k = int(np.flatnonzero(empty.to_numpy())[0])
            raise InputError(f"{path}: line {table['line'].iloc[k]}: empty {column}")
    return table


def pool_levels(pool: pd.DataFrame, source: str = "pool") -> dict[str, pd.DataFrame]:
    """The rated pairs of a candidate pool: ``{"verb": a, b, score, "object": ...}``, one row
    per unordered pair. Category-1 rows rate the object pair, category-2 rows the verb pair; a
    pair rated twice with different levels is an error naming both lines."""
    out = {}
    for name, cat, gt_col, pred_col in (("object", 1, "gt_object_synset", "pred_object_synset"),
                                        ("verb", 2, "gt_verb_synset", "pred_verb_synset")):
        rows = pool[(pool["category"] == cat) & (pool[gt_col] != pool[pred_col])]
        a = np.where(rows[gt_col] < rows[pred_col], rows[gt_col], rows[pred_col])
        b = np.where(rows[gt_col] < rows[pred_col], rows[pred_col], rows[gt_col])
        pairs = pd.DataFrame({"a": a, "b": b, "score": rows["similarity_level"].to_numpy(float),
                              "line": rows["line"].to_numpy()})
        levels = pairs.groupby(["a", "b"])["score"].nunique()
        if (levels > 1).any():
            a0, b0 = levels[levels > 1].index[0]
            clash = pairs[(pairs["a"] == a0) & (pairs["b"] == b0)]
            raise InputError(f"{source}: {name} pair ({a0}, {b0}) has levels "
                             f"{clash['score'].iloc[0]:g} (line {clash['line'].iloc[0]}) and "
                             f"{clash['score'].iloc[-1]:g} (line {clash['line'].iloc[-1]})")
        out[name] = pairs.drop_duplicates(["a", "b"]).drop(columns="line").reset_index(drop=True)
    return out


def pool_matrices(pool: pd.DataFrame, source: str) -> dict[str, SimilarityMatrix]:
    """Verb and object :class:`SimilarityMatrix` of the pool's levels. Pairs rated 0 are not
    stored (a missing pair is 0), so ``meta["rated_pairs"]`` lists every rated pair: the matrix
    is partial, and :func:`compare_matrices` compares on those pairs only."""
    out = {}
    for name, pairs in pool_levels(pool, source).items():
        meta = {"source": source, "method": PARTIAL_NOTE, "partial": True,
                "rated_pairs": pairs[["a", "b"]].to_numpy().tolist()}
        out[name] = SimilarityMatrix.from_long(pairs["a"], pairs["b"], pairs["score"], meta=meta)
    return out


def _pairs_of(matrix: SimilarityMatrix) -> set[tuple[str, str]]:
    if matrix.meta.get("partial"):
        return {tuple(sorted(p)) for p in matrix.meta["rated_pairs"]}
    i, j, _ = matrix.entries()
    return {tuple(sorted(p)) for p in zip(matrix.labels[i], matrix.labels[j])}


def compare_matrices(a: SimilarityMatrix, b: SimilarityMatrix) -> dict:
    """How two matrices agree on their shared pairs of distinct labels.

    Shared pairs: for a partial matrix (``meta["partial"]``, e.g. :func:`pool_matrices`) its
    rated pairs, for a full one its stored (non-zero) pairs, each kept when both labels are in
    both matrices — a full matrix scores a missing pair 0, a partial one does not know it.
    Reports Eq. 13 agreement ``1 − |a − b| / 4`` (SHOE §4.3), Spearman's ρ and the confusion of
    levels (scores rounded to the nearest of 0–4).

    >>> x = SimilarityMatrix.from_long(["p", "p"], ["q", "r"], [4, 2])
    >>> y = SimilarityMatrix.from_long(["p", "p"], ["q", "r"], [3, 2])
    >>> compare_matrices(x, y)["agreement"]
    0.875
    """
    from scipy.stats import spearmanr

    from metrics.study._agreement import eq13_agreement

    both = set(a.labels) & set(b.labels)
    if a.meta.get("partial") or b.meta.get("partial"):
        shared = (_pairs_of(a) if a.meta.get("partial") else _pairs_of(b))
        if a.meta.get("partial") and b.meta.get("partial"):
            shared &= _pairs_of(b)
    else:
        shared = _pairs_of(a) | _pairs_of(b)
    pairs = sorted(p for p in shared if p[0] in both and p[1] in both)
    if not pairs:
        raise InputError("the two matrices share no pair of labels")
    left, right = np.array(pairs, dtype=object).T
    sa, sb = a.scores(left, right), b.scores(left, right)
    varies = len(pairs) > 1 and np.ptp(sa) > 0 and np.ptp(sb) > 0   # Spearman is undefined otherwise
    rho = spearmanr(sa, sb).statistic if varies else float("nan")
    confusion = np.zeros((5, 5), dtype=np.int64)
    np.add.at(confusion, (np.rint(sa).astype(int), np.rint(sb).astype(int)), 1)
    return {"n_pairs": len(pairs), "n_labels_shared": len(both),
            "agreement": float(eq13_agreement(sa, sb).mean()),
            "spearman": None if np.isnan(rho) else float(rho),
            "mean_abs_difference": float(np.abs(sa - sb).mean()),
            "same_level": float(np.mean(np.rint(sa) == np.rint(sb))),
            "confusion": confusion.tolist()}


def compare_lines(a: SimilarityMatrix, b: SimilarityMatrix) -> tuple[dict, str]:
    """``compare_matrices`` of A and B, and its text for the terminal."""
    r = compare_matrices(a, b)
    rho = "n/a" if r["spearman"] is None else f"{r['spearman']:.3f}"
    lines = [f"{r['n_pairs']} shared pairs ({r['n_labels_shared']} shared labels)",
             f"Eq. 13 agreement {r['agreement']:.3f}   Spearman {rho}   mean |difference| "
             f"{r['mean_abs_difference']:.3f}   same level {r['same_level']:.1%}",
             "confusion of levels (rows: A, columns: B)",
             "      " + "".join(f"{j:>6}" for j in range(5))]
    lines += [f"{i:>6}" + "".join(f"{c:>6}" for c in row) for i, row in enumerate(r["confusion"])]
    return r, "\n".join(lines)
