"""Labelled, symmetric verb–verb or object–object similarity matrices and HOI similarity.

A matrix holds scores on SHOE's 0–4 scale (0 completely dissimilar … 4 interchangeable) for
pairs of labels (WordNet synset names or dataset labels). Lookups return similarities
``score / 4`` in [0, 1]; a label compared with itself is 1 and a pair the matrix does not
hold is 0 (SHOE §3.1).

Two file formats (docs/contracts.md):

- CSV, long form, header ``a,b,score``; each unordered pair once (both orders allowed when
  they agree).
- ``.npz`` with ``labels``, either dense ``scores`` or sparse ``row``/``col``/``val``, and
  ``meta`` (a JSON string with the provenance).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from metrics.core._choices import COMBINATIONS, SCALE_MAX
from metrics.core._constraints import FRACTION, Options, validate_params
from metrics.core._errors import InputError
from metrics.core._inputs import check_readable, numbers, parse_json, read_csv, read_json, refuse_first_row
from metrics.core._types import Numbers, Texts
from metrics.core._validation import array_problem


@dataclass(frozen=True)
class Coverage:
    """How many requested pairs a matrix could answer."""

    n_pairs: int
    n_identical: int
    n_found: int
    n_missing: int
    unknown_labels: tuple[str, ...] = field(default=())

    @property
    def missing_rate(self) -> float:
        return self.n_missing / self.n_pairs if self.n_pairs else 0.0


class SimilarityMatrix:
    """A symmetric similarity matrix over labels, dense or sparse, with provenance.

    Parameters
    ----------
    labels : sequence of str
        Unique labels (synset names or dataset labels).
    scores : (n, n) array, optional
        Dense scores on the 0–4 scale. Must be symmetric; the diagonal is forced to 4.
    row, col, val : arrays, optional
        Sparse scores: ``val[k]`` is the score of ``(labels[row[k]], labels[col[k]])``.
        Either order may be given; both orders are stored.
    meta : dict, optional
        Provenance: source, models, study, date, method.

    Examples
    --------
    >>> m = SimilarityMatrix(["ride.v.01", "straddle.v.01"], row=[0], col=[1], val=[3.0])
    >>> m.sim("straddle.v.01", "ride.v.01"), m.sim("ride.v.01", "ride.v.01"), m.sim("ride.v.01", "x")
    (0.75, 1.0, 0.0)
    """

    def __init__(self, labels: Iterable[str], scores=None, *, row=None, col=None, val=None,
                 meta: dict | None = None):
        self.labels = np.asarray([str(x) for x in labels], dtype=object)
        self._index = pd.Index(self.labels)
        if not self._index.is_unique:
            dup = self._index[self._index.duplicated()][0]
            raise InputError(f"duplicate label {dup!r} in similarity matrix")
        self.meta = dict(meta or {})
        n = len(self.labels)
        if (scores is None) == (val is None):
            raise InputError("give either dense scores or sparse row/col/val, not both or neither")
        self._dense: np.ndarray | None = None    # dense scores, or the sparse sorted keys and values
        self._keys, self._vals = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if scores is not None:
            values = np.array(scores, dtype=np.float64)
            if values.shape != (n, n):
                raise InputError(f"scores has shape {values.shape}, expected ({n}, {n}) for {n} labels")
            _check_range(values, "scores")  # before float32, which would overflow a huge value
            dense = values.astype(np.float32)
            if not np.allclose(dense, dense.T, atol=1e-6):
                i, j = np.argwhere(~np.isclose(dense, dense.T, atol=1e-6))[0]
                raise InputError(f"scores is not symmetric: ({self.labels[i]}, {self.labels[j]})")
            np.fill_diagonal(dense, SCALE_MAX)
            self._dense = dense
        else:
            self._keys, self._vals = _symmetric_keys(n, row, col, val, self.labels)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_long(cls, a: Texts | pd.Series, b: Texts | pd.Series, score: Numbers | pd.Series, *,
                  labels: Iterable[str] | None = None, meta: dict | None = None) -> SimilarityMatrix:
        """Build a sparse matrix from parallel arrays of labels and 0–4 scores."""
        a = np.asarray(a, dtype=object)
        b = np.asarray(b, dtype=object)
        if labels is None:
            labels = pd.unique(np.concatenate([a, b]))
        idx = pd.Index(labels)
        row, col = idx.get_indexer(a), idx.get_indexer(b)
        if (row < 0).any() or (col < 0).any():
            raise InputError("pair label not in the given label list")
        return cls(labels, row=row, col=col, val=np.asarray(score, dtype=np.float64), meta=meta)

    @classmethod
    def identity(cls, labels: Iterable[str], meta: dict | None = None) -> SimilarityMatrix:
        """Exact match only: 4 on the diagonal, 0 elsewhere."""
        labels = list(labels)
        return cls(labels, row=[], col=[], val=[], meta=meta or {"source": "identity"})

    # ------------------------------------------------------------------ properties
    @property
    def is_dense(self) -> bool:
        return self._dense is not None

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @property
    def n_pairs(self) -> int:
        """Unordered pairs of distinct labels with a non-zero score."""
        if self._dense is not None:
            return int((np.count_nonzero(self._dense) - self.n_labels) // 2)
        return int(len(self._keys) // 2)

    @property
    def sparsity(self) -> float:
        """Share of unordered pairs of distinct labels that score 0 (are not stored)."""
        total = self.n_labels * (self.n_labels - 1) / 2
        return 1.0 - self.n_pairs / total if total else 0.0

    def __contains__(self, label: str) -> bool:
        return label in self._index

    def __repr__(self) -> str:
        kind = "dense" if self.is_dense else "sparse"
        return f"SimilarityMatrix({self.n_labels} labels, {self.n_pairs} pairs, {kind})"

    # ------------------------------------------------------------------ lookups
    def indices(self, labels: Texts | pd.Series) -> np.ndarray:
        """Row index of each label, -1 where the matrix does not know it."""
        return self._index.get_indexer(np.asarray(labels, dtype=object).ravel())

    def scores_by_index(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """0–4 scores for index arrays (-1 = unknown label, scoring 0 unless ia == ib)."""
        ia = np.asarray(ia, dtype=np.int64)
        ib = np.asarray(ib, dtype=np.int64)
        out = np.zeros(np.broadcast(ia, ib).shape, dtype=np.float64)
        ia, ib = np.broadcast_arrays(ia, ib)
        known = (ia >= 0) & (ib >= 0)
        if self._dense is not None:
            out[known] = self._dense[ia[known], ib[known]]
        elif len(self._keys):
            q = ia[known] * self.n_labels + ib[known]
            pos = np.searchsorted(self._keys, q)
            pos = np.minimum(pos, len(self._keys) - 1)
            hit = self._keys[pos] == q
            vals = np.where(hit, self._vals[pos], 0.0)
            out[known] = vals
        out[known & (ia == ib)] = SCALE_MAX
        return out

    def scores(self, a: Texts | pd.Series, b: Texts | pd.Series) -> np.ndarray:
        """Vectorized 0–4 scores for arrays of labels; identical labels score 4."""
        a = np.asarray(a, dtype=object)
        b = np.asarray(b, dtype=object)
        a, b = np.broadcast_arrays(a, b)
        out = self.scores_by_index(self.indices(a).reshape(a.shape), self.indices(b).reshape(b.shape))
        out[a == b] = SCALE_MAX
        return out

    def sims(self, a: Texts | pd.Series, b: Texts | pd.Series) -> np.ndarray:
        """Vectorized similarities in [0, 1] for arrays of labels."""
        return self.scores(a, b) / SCALE_MAX

    def sim(self, a: str, b: str) -> float:
        """Similarity of one pair in [0, 1]: self = 1, missing = 0."""
        return float(self.sims([a], [b])[0])

    def coverage(self, a: Texts | pd.Series, b: Texts | pd.Series) -> Coverage:
        """How many of the requested pairs were found, identical, or missing."""
        a = np.asarray(a, dtype=object).ravel()
        b = np.asarray(b, dtype=object).ravel()
        identical = a == b
        found = (self.scores(a, b) > 0) & ~identical
        ia, ib = self.indices(a), self.indices(b)
        unknown = pd.unique(np.concatenate([a[ia < 0], b[ib < 0]]))
        return Coverage(n_pairs=len(a), n_identical=int(identical.sum()), n_found=int(found.sum()),
                        n_missing=int(len(a) - identical.sum() - found.sum()),
                        unknown_labels=tuple(sorted(str(x) for x in unknown)))

    def neighbours(self, label: str, min_score: float = 0.0) -> pd.Series:
        """Labels scored above ``min_score`` against ``label``, as a Series of 0–4 scores."""
        i = self._index.get_loc(label)
        if self._dense is not None:
            row = self._dense[i].astype(np.float64)
            sel = np.flatnonzero(row > min_score)
            return pd.Series(row[sel], index=self.labels[sel]).drop(label, errors="ignore")
        lo, hi = np.searchsorted(self._keys, [i * self.n_labels, (i + 1) * self.n_labels])
        cols = self._keys[lo:hi] - i * self.n_labels
        vals = self._vals[lo:hi].astype(np.float64)
        keep = vals > min_score
        return pd.Series(vals[keep], index=self.labels[cols[keep]])

    # ------------------------------------------------------------------ export
    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Index arrays ``(row, col, score)`` of each stored unordered pair once (row < col)."""
        if self._dense is not None:
            i, j = np.nonzero(np.triu(self._dense, k=1))
            return i, j, self._dense[i, j].astype(np.float64)
        i, j = np.divmod(self._keys, self.n_labels)
        upper = i < j
        return i[upper], j[upper], self._vals[upper].astype(np.float64)

    def to_long(self) -> pd.DataFrame:
        """Each unordered pair with a non-zero score once: columns ``a, b, score``."""
        i, j, vals = self.entries()
        return pd.DataFrame({"a": self.labels[i], "b": self.labels[j], "score": vals})

    def write_npz(self, handle: BinaryIO) -> None:
        """The ``.npz`` form (dense or sparse, as held) into a binary file object."""
        from metrics.core._jsonio import json_text

        arrays = {"labels": self.labels.astype(str), "meta": np.array(json_text(self.meta, indent=None))}
        if self._dense is not None:
            arrays["scores"] = self._dense
        else:
            i, j, vals = self.entries()
            arrays.update(row=i.astype(np.int32), col=j.astype(np.int32), val=vals.astype(np.float32))
        np.savez_compressed(handle, allow_pickle=False, **arrays)

    def save(self, path: str | Path) -> Path:
        """Write as ``.csv`` (long form, with a ``.meta.json`` beside it) or ``.npz`` (dense or
        sparse, as held), by suffix; each file atomically (:mod:`metrics.core._jsonio`)."""
        from metrics.core._jsonio import atomic_file, json_text, write_text_atomic

        path = Path(path)
        if path.suffix == ".csv":
            write_text_atomic(path, self.to_long().to_csv(index=False, float_format="%.6g"))
            if self.meta:
                write_text_atomic(path.with_name(path.name + ".meta.json"), json_text(self.meta))
        elif path.suffix == ".npz":
            with atomic_file(path) as handle:
                self.write_npz(handle)
        else:
            raise InputError(f"{path}: unknown matrix format (use .csv or .npz)")
        return path

    @classmethod
    def load(cls, path: str | Path) -> SimilarityMatrix:
        """Read a ``.csv`` or ``.npz`` matrix; bad files raise a one-line InputError."""
        path = Path(path)
        check_readable(path)
        if path.suffix == ".csv":
            return _load_csv(path)
        if path.suffix == ".npz":
            return _load_npz(path)
        raise InputError(f"{path}: unknown matrix format (use .csv or .npz)")


def _check_range(values: np.ndarray, what: str) -> None:
    bad = ~np.isfinite(values) | (values < 0) | (values > SCALE_MAX)
    if bad.any():
        raise InputError(f"{what}: score {float(values[bad].ravel()[0])!r} outside the 0–4 scale")


def _symmetric_keys(n, row, col, val, labels):
    row = np.asarray(row, dtype=np.int64).ravel()
    col = np.asarray(col, dtype=np.int64).ravel()
    val = np.asarray(val, dtype=np.float64).ravel()
    if not (len(row) == len(col) == len(val)):
        raise InputError("row, col and val have different lengths")
    if len(row) and (row.min() < 0 or col.min() < 0 or row.max() >= n or col.max() >= n):
        raise InputError(f"row/col index outside 0..{n - 1}")
    _check_range(val, "val")
    off = row != col
    row, col, val = row[off], col[off], val[off]
    keys = np.concatenate([row * n + col, col * n + row])
    vals = np.concatenate([val, val])
    order = np.argsort(keys, kind="stable")
    keys, vals = keys[order], vals[order]
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if len(dup):
        clash = dup[vals[dup] != vals[dup + 1]]
        if len(clash):
            i, j = divmod(int(keys[clash[0]]), n)
            raise InputError(f"conflicting scores for ({labels[i]}, {labels[j]}): "
                             f"{vals[clash[0]]:g} and {vals[clash[0] + 1]:g}")
        keep = np.ones(len(keys), dtype=bool)
        keep[dup + 1] = False
        keys, vals = keys[keep], vals[keep]
    nonzero = vals > 0
    return keys[nonzero], vals[nonzero].astype(np.float32)


def _load_csv(path: Path) -> SimilarityMatrix:
    df = read_csv(path)
    if list(df.columns[:3]) != ["a", "b", "score"]:
        raise InputError(f"{path}: header must be 'a,b,score', found {','.join(map(str, df.columns))}")
    score = numbers(df["score"]).to_numpy(dtype=float)
    for column in ("a", "b"):
        refuse_first_row(path, df[column].str.strip() == "", lambda k, column=column: f"empty '{column}'")
    refuse_first_row(path, ~np.isfinite(score) | (score < 0) | (score > SCALE_MAX),
                     lambda k: f"score {df['score'].iloc[k]!r} is not a number in 0–4")
    refuse_first_row(path, (df["a"] == df["b"]).to_numpy() & (score != SCALE_MAX),
                     lambda k: "a label compared with itself must score 4")
    meta_path = path.with_name(path.name + ".meta.json")
    meta = _meta(read_json(meta_path), str(meta_path)) if meta_path.exists() else {"source": str(path)}
    try:
        return SimilarityMatrix.from_long(df["a"].to_numpy(), df["b"].to_numpy(), score, meta=meta)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from exc


def _meta(value, where: str) -> dict:
    """A matrix's provenance: a JSON object (checked by the JSON policy of metrics.core._inputs)."""
    if not isinstance(value, dict):
        raise InputError(f"{where}: the provenance must be a JSON object, got {type(value).__name__}")
    return value


_NPZ_KINDS = {"labels": "US", "scores": "iuf", "row": "iu", "col": "iu", "val": "iuf", "meta": "US"}


def _npz_arrays(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a matrix ``.npz``, each of the kind its role needs."""
    with open(path, "rb") as handle:
        try:
            data = np.load(handle, allow_pickle=False)
            names = list(data.files)
        except Exception as exc:  # numpy raises ValueError, OSError, zipfile and pickle errors here
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InputError(f"{path}: not a readable .npz file ({reason})") from None
        arrays = {}
        with data:
            for name in names:
                arrays[name] = _npz_array(data, name, path)
    return arrays


def _npz_array(data, name: str, path: Path) -> np.ndarray:
    try:
        with warnings.catch_warnings():  # a header of Python 2's spelling: read, or refused below
            warnings.simplefilter("ignore", UserWarning)
            array = data[name]
    except ValueError:
        raise InputError(f"{path}: array {name!r} holds Python objects; save numbers and strings only") from None
    except Exception as exc:  # a damaged member
        raise InputError(f"{path}: array {name!r} cannot be read ({exc})") from None
    kinds = _NPZ_KINDS.get(name)
    problem = array_problem(array) if kinds and "f" in kinds else None
    if problem:
        raise InputError(f"{path}: array {name!r} {problem}")
    if kinds and array.dtype.kind not in kinds:
        wanted = "strings" if kinds == "US" else "whole numbers" if kinds == "iu" else "numbers"
        raise InputError(f"{path}: array {name!r} holds {array.dtype} values, not {wanted}")
    return array


def _load_npz(path: Path) -> SimilarityMatrix:
    arrays = _npz_arrays(path)
    if "labels" not in arrays:
        raise InputError(f"{path}: missing array 'labels'")
    meta = _meta(parse_json(str(arrays["meta"]), f"{path}: meta"), f"{path}: meta") if "meta" in arrays else {}
    labels = arrays["labels"].astype(str)
    if labels.ndim != 1:
        raise InputError(f"{path}: 'labels' has shape {labels.shape}, expected one label per entry")
    try:
        if "scores" in arrays:
            scores = arrays["scores"]
            if scores.ndim == 2 and scores.shape[0] == scores.shape[1] == len(labels):
                diagonal = np.diagonal(scores)
                off = np.flatnonzero(diagonal != SCALE_MAX)
                if len(off):
                    i = int(off[0])
                    raise InputError(f"scores[{i}, {i}] is {diagonal[i]:g}: a label ({labels[i]}) "
                                     "compared with itself must score 4")
            return SimilarityMatrix(labels, scores, meta=meta)
        missing = {"row", "col", "val"} - set(arrays)
        if missing:
            raise InputError(f"missing array(s) {', '.join(sorted(missing))} (or dense 'scores')")
        row, col, val = arrays["row"], arrays["col"], arrays["val"]
        if row.shape == col.shape == val.shape:
            same = np.flatnonzero((row == col) & (val != SCALE_MAX))
            if len(same):
                k = int(same[0])
                raise InputError(f"val[{k}] is {val[k]:g} for row = col = {row[k]}: a label compared "
                                 "with itself must score 4")
        return SimilarityMatrix(labels, row=row, col=col, val=val, meta=meta)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from exc


@validate_params({"method": Options(COMBINATIONS), "w": FRACTION})
def combine(verb_sim: float | Numbers | pd.Series, object_sim: float | Numbers | pd.Series, *, method: str = "arithmetic", w: float = 0.5) -> np.ndarray:
    """HOI similarity from verb and object similarities (SHOE Eq. 1).

    - ``arithmetic``: ``w·v + (1 − w)·o`` (the paper prints ``w·v + (1 − w)``; the object
      term is clearly intended, and w = ½ gives the plain mean used throughout the paper);
    - ``geometric``: ``sqrt(v·o)``;
    - ``min``: ``min(v, o)``.

    >>> combine([1.0, 0.5], [0.5, 0.0]).tolist()
    [0.75, 0.25]
    >>> combine([1.0, 0.5], [0.25, 0.0], method="geometric").tolist()
    [0.5, 0.0]
    """
    v = np.asarray(verb_sim, dtype=np.float64)
    o = np.asarray(object_sim, dtype=np.float64)
    if method == "arithmetic":
        return w * v + (1.0 - w) * o
    if method == "geometric":
        return np.sqrt(v * o)
    return np.minimum(v, o)
