"""HOI pairs for the SHOE user study (SHOE §4.3).

Ground-truth HOI classes are drawn from a class distribution (uniform, or weights from a file).
For each category — 1: same verb, different object; 2: different verb, same object; 3: both
different — and each SHOE level 1–4 (``round(4 · f(verb_sim, object_sim))``, halves rounded up)
an equal share of predicted HOIs is drawn from the similarity matrices' candidates (WordNet
synsets with glosses). Within a cell, a ground truth is drawn first (among those that can reach
the cell), then one of the (verb score, object score) combinations that gives the level, then
a candidate with each score, so the pairs spread over the combinations rather than piling up
where candidates are plentiful. Deterministic for a seed; no pair twice.

A cell the matrices cannot fill (with the WordNet baseline, category 1 and 2 never reach
level 1 and category 3 never reaches level 4) is reported, and its share goes to the cells
that can still take more, so the total reaches ``n`` when possible (``redistribute=False``
keeps the shares strictly equal).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from metrics import InputError, SimilarityMatrix, combine, hico, wordnet
from metrics.baseline import load_default
from metrics.vocabulary import Vocabulary

CATEGORIES = {1: "same verb, different object", 2: "different verb, same object",
              3: "both different"}
LEVELS = (1, 2, 3, 4)
ITEM_COLUMNS = ["item_id", "category", "level", "gt_hoi_id", "gt_verb_label", "gt_object_label",
                "gt_verb", "gt_object", "pred_verb", "pred_object", "verb_sim", "object_sim",
                "shoe_sim"]
TRIES_PER_PAIR = 60


def shoe_level(verb_sim, object_sim, w: float = 0.5) -> np.ndarray:
    """The SHOE level: 4 × the arithmetic HOI similarity, rounded half up.

    >>> shoe_level([1.0, 0.2, 0.4], [0.6, 0.2, 0.2]).tolist()
    [3, 1, 1]
    """
    hoi = combine(verb_sim, object_sim, "arithmetic", w)
    return np.floor(4.0 * hoi + 0.5 + 1e-9).astype(int)


@dataclass
class SampleReport:
    """What each (category, level) cell was meant to get and got."""

    rows: list[dict] = field(default_factory=list)

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=["category", "level", "share", "filled", "missing",
                                                "note"])

    @property
    def unfilled(self) -> pd.DataFrame:
        t = self.table()
        return t[t["missing"] > 0]

    def text(self) -> str:
        t = self.table()
        lines = ["category  level  share  filled  missing  note"]
        for r in t.itertuples():
            lines.append(f"{r.category:>8}  {r.level:>5}  {r.share:>5}  {r.filled:>6}  "
                         f"{r.missing:>7}  {r.note}")
        lines.append(f"total: {int(t['filled'].sum())} pairs; cells short of their share: "
                     f"{int((t['missing'] > 0).sum())} of {len(t)}")
        return "\n".join(lines)


@lru_cache(maxsize=8)
def _glossed(labels: tuple[str, ...], pos: str) -> np.ndarray:
    """Labels that are WordNet synsets of ``pos`` with a gloss."""
    keep = [lab for lab in labels if wordnet.is_synset_name(lab) and wordnet.pos_of(lab) == pos
            and wordnet.gloss(lab)]
    return np.array(sorted(keep), dtype=object)


class _Side:
    """Candidates of one part of speech, bucketed by their score against a ground truth."""

    def __init__(self, matrix: SimilarityMatrix, pos: str):
        self.matrix = matrix
        self.candidates = _glossed(tuple(matrix.labels), pos)
        self.candidate_set = set(self.candidates)
        self._buckets: dict[str, dict[float, np.ndarray]] = {}

    def buckets(self, gt: str) -> dict[float, np.ndarray]:
        """Similarity in [0, 1] → candidates other than ``gt`` (0 holds every unscored one)."""
        if gt not in self._buckets:
            near = self.matrix.neighbours(gt) if gt in self.matrix else pd.Series(dtype=float)
            near = near[[lab in self.candidate_set and lab != gt for lab in near.index]]
            out: dict[float, list[str]] = {}
            for label, score in near.sort_index().items():
                out.setdefault(round(score / 4.0, 6), []).append(label)
            unscored = np.array([c for c in self.candidates if c not in near.index and c != gt],
                                dtype=object)
            result = {s: np.array(v, dtype=object) for s, v in sorted(out.items())}
            if len(unscored):
                result[0.0] = unscored
            self._buckets[gt] = result
        return self._buckets[gt]


def _combos(category: int, level: int, verbs: dict, objects: dict, w: float) -> list[tuple]:
    """(verb sim, object sim) combinations reaching ``level`` in ``category``."""
    vs = [1.0] if category == 1 else sorted(verbs)
    os_ = [1.0] if category == 2 else sorted(objects)
    return [(v, o) for v in vs for o in os_ if shoe_level([v], [o], w)[0] == level]


def load_class_weights(path: str | Path, vocabulary: Vocabulary) -> pd.Series:
    """Weights per HOI class from a CSV with ``hoi_id,weight`` or ``verb,object,weight``."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"class weights file not found: {path}")
    try:
        table = pd.read_csv(path)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"{path}: not a readable CSV ({str(exc).splitlines()[0]})") from None
    if "weight" not in table.columns:
        raise InputError(f"{path}: needs a 'weight' column (with hoi_id, or verb and object)")
    numeric = pd.to_numeric(table["weight"], errors="coerce")
    bad = numeric.isna() | ~np.isfinite(numeric) | (numeric < 0)
    if bad.any():
        k = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{path} line {k + 2}: weight {table['weight'].iloc[k]!r} is not a finite, "
                         "non-negative number")
    table["weight"] = numeric
    classes = vocabulary.classes
    if "hoi_id" in table.columns:
        known = set(classes["hoi_id"])
        for line, hoi in enumerate(table["hoi_id"], start=2):
            if hoi not in known:
                raise InputError(f"{path} line {line}: unknown hoi_id {hoi!r}")
        weights = table.groupby("hoi_id")["weight"].sum()
    elif {"verb", "object"} <= set(table.columns):
        index = {(v, o): h for h, v, o in classes[["hoi_id", "verb", "object"]].itertuples(index=False)}
        ids = []
        for line, (v, o) in enumerate(table[["verb", "object"]].itertuples(index=False), start=2):
            if (v, o) not in index:
                raise InputError(f"{path} line {line}: no HOI class {v} {o}")
            ids.append(index[(v, o)])
        weights = table.assign(hoi_id=ids).groupby("hoi_id")["weight"].sum()
    else:
        raise InputError(f"{path}: needs a hoi_id column or verb and object columns")
    if (weights < 0).any() or not np.isfinite(weights).all() or weights.sum() <= 0:
        raise InputError(f"{path}: weights must be finite, non-negative and not all zero")
    return weights


def sample_pairs(n: int, seed: int = 0, *, verb_matrix: SimilarityMatrix | None = None,
                 object_matrix: SimilarityMatrix | None = None,
                 class_weights: pd.Series | None = None, vocabulary: Vocabulary | None = None,
                 w: float = 0.5, redistribute: bool = True) -> tuple[pd.DataFrame, SampleReport]:
    """Draw ``n`` (ground truth, prediction) HOI pairs; returns the items and the fill report."""
    if n < 1:
        raise InputError(f"n must be at least 1, got {n}")
    vocabulary = vocabulary or hico()
    verbs = _Side(verb_matrix or load_default("v"), "v")
    objects = _Side(object_matrix or load_default("n"), "n")
    classes = vocabulary.classes.copy()
    classes["gv"] = [vocabulary.verb_synset(v) for v in classes["verb"]]
    classes["go"] = [vocabulary.object_synset(o) for o in classes["object"]]
    classes = classes[classes["gv"].notna() & classes["go"].notna()].reset_index(drop=True)
    if class_weights is None:
        weights = np.ones(len(classes))
    else:
        weights = class_weights.reindex(classes["hoi_id"]).fillna(0.0).to_numpy(dtype=float)
        if weights.sum() <= 0:
            raise InputError("class weights give no weight to any class with verb and object synsets")
    rng = np.random.default_rng(seed)
    cells = [(c, lev) for c in CATEGORIES for lev in LEVELS]
    share = {cell: n // len(cells) for cell in cells}
    for k in rng.permutation(len(cells))[: n % len(cells)]:
        share[cells[k]] += 1

    # which ground truths can reach which cell, and with which combinations
    reach: dict[tuple, list[tuple[int, list]]] = {cell: [] for cell in cells}
    for idx, (gv, go) in enumerate(zip(classes["gv"], classes["go"])):
        vb, ob = verbs.buckets(gv), objects.buckets(go)
        for cell in cells:
            combos = _combos(cell[0], cell[1], vb, ob, w)
            if combos:
                reach[cell].append((idx, combos))

    seen: set[tuple[str, str, str, str]] = set()
    drawn: dict[tuple, list[dict]] = {cell: [] for cell in cells}
    exhausted: set[tuple] = set()

    def fill(cell: tuple, count: int) -> int:
        options = reach[cell]
        if not options:
            exhausted.add(cell)
            return 0
        p = weights[[i for i, _ in options]]
        if p.sum() <= 0:
            exhausted.add(cell)
            return 0
        p = p / p.sum()
        got = misses = 0
        while got < count:
            if misses >= TRIES_PER_PAIR * max(count, 1):
                exhausted.add(cell)
                break
            idx, combos = options[rng.choice(len(options), p=p)]
            row = classes.iloc[idx]
            v, o = combos[rng.integers(len(combos))]
            pv = row["gv"] if cell[0] == 1 else rng.choice(verbs.buckets(row["gv"])[v])
            po = row["go"] if cell[0] == 2 else rng.choice(objects.buckets(row["go"])[o])
            key = (row["gv"], row["go"], str(pv), str(po))
            if key in seen:
                misses += 1
                continue
            seen.add(key)
            drawn[cell].append({"category": cell[0], "level": cell[1], "gt_hoi_id": int(row["hoi_id"]),
                                "gt_verb_label": row["verb"], "gt_object_label": row["object"],
                                "gt_verb": row["gv"], "gt_object": row["go"], "pred_verb": str(pv),
                                "pred_object": str(po), "verb_sim": v, "object_sim": o})
            got += 1
        return got

    for cell in cells:
        fill(cell, share[cell])
    missing_total = n - sum(len(v) for v in drawn.values())
    while redistribute and missing_total > 0:
        open_cells = [c for c in cells if c not in exhausted]
        if not open_cells:
            break
        per = math.ceil(missing_total / len(open_cells))
        for cell in open_cells:
            if missing_total <= 0:
                break
            missing_total -= fill(cell, min(per, missing_total))

    report = SampleReport()
    for cell in cells:
        got = len(drawn[cell])
        missing = max(0, share[cell] - got)
        if not reach[cell]:
            note = "no ground truth reaches this level with these matrices"
        elif missing:
            note = "ran out of distinct pairs"
        elif got > share[cell]:
            note = f"+{got - share[cell]} from unfilled cells"
        else:
            note = ""
        report.rows.append({"category": cell[0], "level": cell[1], "share": share[cell],
                            "filled": got, "missing": missing, "note": note})
    items = pd.DataFrame([r for cell in cells for r in drawn[cell]])
    if items.empty:
        return pd.DataFrame(columns=ITEM_COLUMNS), report
    items["shoe_sim"] = combine(items["verb_sim"], items["object_sim"], "arithmetic", w)
    items.insert(0, "item_id", [f"p{k:04d}" for k in range(1, len(items) + 1)])
    return items[ITEM_COLUMNS], report
