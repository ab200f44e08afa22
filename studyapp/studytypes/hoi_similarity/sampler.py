"""HOI pairs for the SHOE user study (SHOE §4.3), following SHOE's own study files.

Categories — 1: same verb, different object; 2: different verb, same object; 3: both different.
The ``level`` of a pair is, as in SHOE's files (``majnoa/streamlit-annotation-app``,
``userstudy/``), the 0–4 SHOE rating of the *changed* component for categories 1 (the object
pair) and 2 (the verb pair), and the HOI level ``round(4 · f(verb_sim, object_sim))`` (halves
up) for category 3. The 11 cells SHOE filled — categories 1 and 2 at levels 1–4, category 3 at
1–3 — get equal shares. Each ground truth is used once: each HOI class, or each (image, class)
when sampling from a candidate pool with images.

From matrices (:func:`sample_pairs`): within a cell, a ground truth not used yet is drawn first
(among those that can reach the cell), then one of the (verb score, object score) combinations
that gives the level, then a candidate with each score. From a candidate pool with precomputed
levels in SHOE's layout (:func:`sample_pool`, ``--pool``): a row of the cell whose ground truth
is not used yet. Deterministic for a seed; no pair twice.

The ground truths are the dataset's HOI classes (:func:`sample_pairs`, ``dataset``). A dataset
without a fixed class list (V-COCO) needs class weights with ``verb, object, weight`` columns:
their (verb, object) rows are the classes to draw from, numbered in the file's order
(``gt_hoi_id``).

A cell the matrices cannot fill is reported, and its share goes to the cells that can still
take more, so the total reaches ``n`` when possible (``redistribute=False`` keeps the shares
strictly equal). With the WordNet baseline, levels 4 of categories 1 and 2 stay empty: the
baseline rates a *different* synset 4 never (4 is the same synset); SHOE's LLM ratings do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from metrics import InputError, SimilarityMatrix, combine, datasets
from metrics.core import SCALE_MAX, at_least_problem, numbers
from metrics.datasets import Vocabulary
from metrics.vocab import excluded_reason, gloss, is_synset_name, load_default, pos_of

CATEGORIES = {1: "same verb, different object", 2: "different verb, same object",
              3: "both different"}
LEVELS = {1: (1, 2, 3, 4), 2: (1, 2, 3, 4), 3: (1, 2, 3)}
CELLS = [(c, lev) for c in CATEGORIES for lev in LEVELS[c]]
ITEM_COLUMNS = ["item_id", "category", "level", "gt_hoi_id", "image_id", "gt_verb_label", "gt_object_label",
                "gt_verb", "gt_object", "pred_verb", "pred_object", "verb_sim", "object_sim",
                "shoe_sim"]
TRIES_PER_PAIR = 60


def shoe_level(verb_sim, object_sim, w: float = 0.5) -> np.ndarray:
    """The HOI level: 4 × the arithmetic HOI similarity, rounded half up.

    >>> shoe_level([1.0, 0.2, 0.4], [0.6, 0.2, 0.2]).tolist()
    [3, 1, 1]
    """
    hoi = combine(verb_sim, object_sim, method="arithmetic", w=w)
    return np.floor(SCALE_MAX * hoi + 0.5 + 1e-9).astype(int)


def pair_level(category: int, verb_sim, object_sim, w: float = 0.5) -> np.ndarray:
    """A pair's level as in SHOE's study files: the changed component's 0–4 rating for
    categories 1 (object) and 2 (verb), the HOI level for category 3.

    >>> pair_level(1, [1.0], [0.2]).tolist(), pair_level(2, [0.8], [1.0]).tolist(), pair_level(3, [0.4], [0.2]).tolist()
    ([1], [3], [1])
    """
    if category == 1:
        return np.floor(SCALE_MAX * np.asarray(object_sim, float) + 0.5 + 1e-9).astype(int)
    if category == 2:
        return np.floor(SCALE_MAX * np.asarray(verb_sim, float) + 0.5 + 1e-9).astype(int)
    return shoe_level(verb_sim, object_sim, w)


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
    keep = [lab for lab in labels if is_synset_name(lab) and pos_of(lab) == pos
            and gloss(lab)]
    return np.array(sorted(keep), dtype=object)


class _Side:
    """Candidates of one part of speech, bucketed by their score against a ground truth:
    glossed synsets of the matrix (of ``allowed`` only, when given), none of ``excluded``."""

    def __init__(self, matrix: SimilarityMatrix, pos: str, *, allowed: set | None = None,
                 excluded: frozenset = frozenset()):
        self.matrix = matrix
        self.candidates = np.array([c for c in _glossed(tuple(matrix.labels), pos)
                                    if (allowed is None or c in allowed) and not excluded_reason(c, excluded)],
                                   dtype=object)
        self.candidate_set = set(self.candidates)
        self._buckets: dict[str, dict[float, np.ndarray]] = {}

    def buckets(self, gt: str) -> dict[float, np.ndarray]:
        """Similarity in [0, 1] → candidates other than ``gt`` (0 holds every unscored one)."""
        if gt not in self._buckets:
            near = self.matrix.neighbours(gt) if gt in self.matrix else pd.Series(dtype=float)
            # plain lists and sets: pandas indexing per label was most of a sampling's time
            kept = sorted((label, score) for label, score in zip(near.index.tolist(), near.tolist())
                          if label in self.candidate_set and label != gt)
            out: dict[float, list[str]] = {}
            for label, score in kept:
                out.setdefault(round(score / SCALE_MAX, 6), []).append(label)
            scored = {label for label, _ in kept}
            unscored = np.array([c for c in self.candidates if c not in scored and c != gt], dtype=object)
            result = {s: np.array(v, dtype=object) for s, v in sorted(out.items())}
            if len(unscored):
                result[0.0] = unscored
            self._buckets[gt] = result
        return self._buckets[gt]


def _combos(category: int, level: int, verbs: dict, objects: dict, w: float) -> list[tuple]:
    """(verb sim, object sim) combinations reaching ``level`` in ``category``."""
    vs = [1.0] if category == 1 else sorted(verbs)
    os_ = [1.0] if category == 2 else sorted(objects)
    grid = [(v, o) for v in vs for o in os_]
    levels = pair_level(category, [v for v, _ in grid], [o for _, o in grid], w)   # elementwise, as one by one
    return [pair for pair, reached in zip(grid, levels) if reached == level]


def load_class_weights(path: str | Path, vocabulary: Vocabulary) -> pd.Series:
    """Weights per HOI class from a CSV with ``hoi_id,weight`` or ``verb,object,weight``; for a
    vocabulary without a class list, weights by (verb, object) of the ``verb,object,weight``
    rows, which then are the classes (labels of the vocabulary)."""
    from metrics.core import line_of, read_csv

    path = Path(path)
    table = read_csv(path, required=("weight",))
    numeric = numbers(table["weight"])
    bad = numeric.isna() | ~np.isfinite(numeric) | (numeric < 0)
    if bad.any():
        k = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{path}: line {line_of(path, k)}: weight {table['weight'].iloc[k]!r} is not a "
                         "finite, non-negative number")
    table["weight"] = numeric
    classes = vocabulary.classes
    if classes.empty:
        return _weights_naming_classes(path, table, vocabulary)
    if "hoi_id" in table.columns:
        known = {str(h): h for h in classes["hoi_id"]}
        ids = []
        for k, hoi in enumerate(table["hoi_id"].str.strip()):
            if hoi not in known:
                raise InputError(f"{path}: line {line_of(path, k)}: unknown hoi_id {hoi!r}")
            ids.append(known[hoi])
        weights = table.assign(hoi_id=ids).groupby("hoi_id")["weight"].sum()
    elif {"verb", "object"} <= set(table.columns):
        index = {(v, o): h for h, v, o in classes[["hoi_id", "verb", "object"]].itertuples(index=False)}
        ids = []
        for k, (v, o) in enumerate(table[["verb", "object"]].itertuples(index=False)):
            if (v, o) not in index:
                raise InputError(f"{path}: line {line_of(path, k)}: no HOI class {v} {o}")
            ids.append(index[(v, o)])
        weights = table.assign(hoi_id=ids).groupby("hoi_id")["weight"].sum()
    else:
        raise InputError(f"{path}: needs a hoi_id column or verb and object columns")
    if (weights < 0).any() or not np.isfinite(weights).all() or weights.sum() <= 0:
        raise InputError(f"{path}: weights must be finite, non-negative and not all zero")
    return weights


def _weights_naming_classes(path: Path, table: pd.DataFrame, vocabulary: Vocabulary) -> pd.Series:
    """Weights by (verb label, object label) for a vocabulary without a class list."""
    from metrics.core import line_of

    title = datasets.get(vocabulary.name).title if vocabulary.name in datasets.names() else vocabulary.name
    if not {"verb", "object"} <= set(table.columns):
        raise InputError(f"{path}: {title} has no fixed list of HOI classes: give verb and object columns "
                         "(the ground-truth classes to draw from) with their weight")
    for k, (v, o) in enumerate(table[["verb", "object"]].itertuples(index=False)):
        for label, pos, what in ((v, "v", "verb"), (o, "n", "object")):
            if not vocabulary.synset(str(label), pos):
                raise InputError(f"{path}: line {line_of(path, k)}: {label!r} is not a {title} {what} "
                                 "label with a synset")
    keys = pd.MultiIndex.from_frame(table[["verb", "object"]].astype(str).apply(lambda c: c.str.strip()))
    weights = pd.Series(table["weight"].to_numpy(dtype=float), index=keys).groupby(level=[0, 1], sort=False).sum()
    if weights.sum() <= 0:
        raise InputError(f"{path}: weights must be finite, non-negative and not all zero")
    return weights


def _classes(vocabulary: Vocabulary, class_weights: pd.Series | None) -> tuple[pd.DataFrame, pd.Series | None]:
    """The ground-truth classes to draw from and their weights by ``hoi_id``."""
    if not vocabulary.classes.empty:
        return vocabulary.classes.copy(), class_weights
    if class_weights is None or not isinstance(class_weights.index, pd.MultiIndex):
        raise InputError(f"dataset {vocabulary.name} has no fixed list of HOI classes: give class weights "
                         "(verb,object,weight) naming the ground-truth classes to draw from")
    classes = pd.DataFrame({"hoi_id": np.arange(len(class_weights)),
                            "verb": class_weights.index.get_level_values(0),
                            "object": class_weights.index.get_level_values(1)})
    return classes, pd.Series(class_weights.to_numpy(), index=classes["hoi_id"])


def _drawable_classes(vocabulary: Vocabulary, class_weights: pd.Series | None,
                      excluded: frozenset = frozenset()) -> tuple[pd.DataFrame, np.ndarray]:
    """The classes whose verb and object have synsets (``gv``, ``go``) that may be shown, and
    their weights."""
    classes, class_weights = _classes(vocabulary, class_weights)
    classes["gv"] = [vocabulary.verb_synset(v) for v in classes["verb"]]
    classes["go"] = [vocabulary.object_synset(o) for o in classes["object"]]
    shown = [not (excluded_reason(v, excluded) or excluded_reason(o, excluded)) if v and o else False
             for v, o in zip(classes["gv"], classes["go"])]
    classes = classes[classes["gv"].notna() & classes["go"].notna() & np.array(shown, dtype=bool)
                      ].reset_index(drop=True)
    if class_weights is None:
        return classes, np.ones(len(classes))
    weights = class_weights.reindex(classes["hoi_id"]).fillna(0.0).to_numpy(dtype=float)
    if weights.sum() <= 0:
        raise InputError("class weights give no weight to any class with verb and object synsets")
    return classes, weights


def _reach(classes: pd.DataFrame, verbs: _Side, objects: _Side, cells: list, w: float) -> dict:
    """Which ground truths can reach which cell, and with which combinations."""
    reach: dict[tuple, list[tuple[int, list]]] = {cell: [] for cell in cells}
    reached: dict[tuple, list] = {}   # bucket scores -> [(cell, combos)]: many classes share them
    for idx, (gv, go) in enumerate(zip(classes["gv"], classes["go"])):
        vb, ob = verbs.buckets(gv), objects.buckets(go)
        key = (tuple(vb), tuple(ob))
        if key not in reached:
            reached[key] = [(cell, combos) for cell in cells if (combos := _combos(cell[0], cell[1], vb, ob, w))]
        for cell, combos in reached[key]:
            reach[cell].append((idx, combos))
    return reach


@dataclass
class _PairDraw:
    """Draws pairs cell by cell: each ground-truth class once, each (gt, prediction) pair once."""

    classes: pd.DataFrame
    weights: np.ndarray
    reach: dict
    verbs: _Side
    objects: _Side
    rng: np.random.Generator
    drawn: dict                                # cell -> drawn rows
    seen: set = field(default_factory=set)     # (gt verb, gt object, pred verb, pred object)
    used: set = field(default_factory=set)     # ground-truth classes drawn
    exhausted: set = field(default_factory=set)

    def _pair(self, cell: tuple, idx: int, combos: list) -> dict:
        """One pair of the class ``idx`` in ``cell``: a combination, then the predicted synsets."""
        row = self.classes.iloc[idx]
        v, o = combos[self.rng.integers(len(combos))]
        pv = row["gv"] if cell[0] == 1 else self.rng.choice(self.verbs.buckets(row["gv"])[v])
        po = row["go"] if cell[0] == 2 else self.rng.choice(self.objects.buckets(row["go"])[o])
        return {"category": cell[0], "level": cell[1], "gt_hoi_id": int(row["hoi_id"]),
                "gt_verb_label": row["verb"], "gt_object_label": row["object"],
                "gt_verb": row["gv"], "gt_object": row["go"], "pred_verb": str(pv),
                "pred_object": str(po), "verb_sim": v, "object_sim": o}

    def fill(self, cell: tuple, count: int) -> int:
        """Draw up to ``count`` new pairs into ``cell``; returns how many it got."""
        got = misses = 0
        while got < count:
            options = [opt for opt in self.reach[cell] if opt[0] not in self.used]
            p = self.weights[[i for i, _ in options]] if options else np.zeros(0)
            if not options or p.sum() <= 0 or misses >= TRIES_PER_PAIR * max(count, 1):
                self.exhausted.add(cell)
                break
            idx, combos = options[self.rng.choice(len(options), p=p / p.sum())]
            pair = self._pair(cell, idx, combos)
            key = (pair["gt_verb"], pair["gt_object"], pair["pred_verb"], pair["pred_object"])
            if key in self.seen:
                misses += 1
                continue
            self.seen.add(key)
            self.used.add(idx)
            self.drawn[cell].append(pair)
            got += 1
        return got


def sample_pairs(n: int, seed: int = 0, *, verb_matrix: SimilarityMatrix | None = None,
                 object_matrix: SimilarityMatrix | None = None,
                 class_weights: pd.Series | None = None, vocabulary: Vocabulary | None = None,
                 w: float = 0.5, redistribute: bool = True, dataset: str | None = None,
                 categories=(1, 2, 3), closed_vocabulary: bool | None = None,
                 exclude_senses=()) -> tuple[pd.DataFrame, SampleReport]:
    """Draw ``n`` (ground truth, prediction) HOI pairs of ``dataset`` (HICO-DET by default: its
    HOI classes are the ground truths, its baseline matrices the default matrices); returns the
    items and the fill report. ``vocabulary`` replaces the dataset's vocabulary; ``categories``
    keeps the cells of those categories only (``[2]``: a verb-similarity study, every pair with
    the ground truth's object). ``closed_vocabulary``: predicted verbs and objects only from the
    vocabulary's own synsets (default: the dataset's ``study_predictions``, closed except for
    HICO-DET). No sense of the offensive-sense exclusion (:func:`metrics.vocab.excluded_senses`)
    or of ``exclude_senses`` is drawn, on either side."""
    if problem := at_least_problem(n, 1):
        raise InputError(f"n {problem}")
    cells = [cell for cell in CELLS if cell[0] in check_categories(categories)]
    vocabulary = vocabulary or datasets.load_vocabulary(dataset)
    if closed_vocabulary is None:
        closed_vocabulary = datasets.get(dataset).study_predictions == "closed"
    excluded = frozenset(exclude_senses)
    allowed = {pos: set(filter(None, (vocabulary.verbs if pos == "v" else vocabulary.objects)["synset"]))
               if closed_vocabulary else None for pos in ("v", "n")}
    verbs = _Side(verb_matrix or load_default("v", dataset=dataset), "v", allowed=allowed["v"], excluded=excluded)
    objects = _Side(object_matrix or load_default("n", dataset=dataset), "n", allowed=allowed["n"],
                    excluded=excluded)
    classes, weights = _drawable_classes(vocabulary, class_weights, excluded)
    rng = np.random.default_rng(seed)
    share = _shares(n, rng, cells)
    reach = _reach(classes, verbs, objects, cells, w)
    draw = _PairDraw(classes, weights, reach, verbs, objects, rng, {cell: [] for cell in cells})
    report = _fill_all(draw.fill, share, draw.exhausted, draw.drawn, redistribute,
                       lambda cell: "no ground truth reaches this level with these matrices"
                       if not reach[cell] else "ran out of distinct pairs or unused ground truths",
                       supply=lambda cell: len(reach[cell]))
    items = pd.DataFrame([r for cell in cells for r in draw.drawn[cell]])
    if not items.empty:
        items["image_id"] = ""
    if items.empty:
        return pd.DataFrame(columns=ITEM_COLUMNS), report
    items["shoe_sim"] = combine(items["verb_sim"], items["object_sim"], method="arithmetic", w=w)
    items.insert(0, "item_id", [f"p{k:04d}" for k in range(1, len(items) + 1)])
    return items[ITEM_COLUMNS], report


def check_categories(categories) -> tuple[int, ...]:
    """The categories to sample, each of 1, 2, 3 once.

    >>> check_categories([2])
    (2,)
    >>> check_categories([2, 4])
    Traceback (most recent call last):
    metrics.core._errors.InputError: categories must list 1, 2 and/or 3, each once, got [2, 4]
    """
    values = list(categories)
    if (not values or len(set(values)) != len(values)
            or any(isinstance(c, bool) or c not in CATEGORIES for c in values)):
        raise InputError(f"categories must list 1, 2 and/or 3, each once, got {values!r}")
    return tuple(sorted(values))


def _shares(n: int, rng, cells: list = CELLS) -> dict:
    """Equal shares of ``n`` over the cells (SHOE's 11; the remainder to random cells)."""
    share = {cell: n // len(cells) for cell in cells}
    for k in rng.permutation(len(cells))[: n % len(cells)]:
        share[cells[k]] += 1
    return share


def _fill_all(fill, share, exhausted, drawn, redistribute, why_short, supply) -> SampleReport:
    """Fill every cell its share — the cells with the fewest candidates (``supply``) first, so
    that using each ground truth once starves them least —, spread what unfillable cells miss
    over the others, and report."""
    n = sum(share.values())
    cells = list(share)
    for cell in sorted(cells, key=supply):
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
        note = (why_short(cell) if missing else
                f"+{got - share[cell]} from unfilled cells" if got > share[cell] else "")
        report.rows.append({"category": cell[0], "level": cell[1], "share": share[cell],
                            "filled": got, "missing": missing, "note": note})
    return report


def sample_pool(pool: pd.DataFrame, n: int, seed: int = 0, *, redistribute: bool = True
                ) -> tuple[pd.DataFrame, SampleReport]:
    """Draw ``n`` pairs from a candidate pool in SHOE's layout with precomputed levels
    (:func:`metrics.study.read_shoe_csv`): balanced over the 11 cells, each ground truth
    (image, verb, object) once, no pair twice."""
    if problem := at_least_problem(n, 1):
        raise InputError(f"n {problem}")
    rng = np.random.default_rng(seed)
    share = _shares(n, rng)
    gt_key = list(zip(pool["image_id"], pool["gt_verb"], pool["gt_object"]))
    pair_key = list(zip(pool["gt_verb_synset"], pool["gt_object_synset"], pool["pred_verb_synset"],
                        pool["pred_object_synset"]))
    rows = {cell: rng.permutation(np.flatnonzero(((pool["category"] == cell[0])
                                                  & (pool["similarity_level"] == cell[1])).to_numpy())).tolist()
            for cell in CELLS}
    used, seen = set(), set()
    drawn: dict[tuple, list[int]] = {cell: [] for cell in CELLS}
    exhausted: set[tuple] = set()

    def fill(cell, count):
        got = 0
        while got < count:
            if not rows[cell]:
                exhausted.add(cell)
                break
            k = rows[cell].pop()
            if gt_key[k] in used or pair_key[k] in seen:
                continue
            used.add(gt_key[k])
            seen.add(pair_key[k])
            drawn[cell].append(k)
            got += 1
        return got

    report = _fill_all(fill, share, exhausted, drawn, redistribute,
                       lambda cell: "the pool has no more pairs with an unused ground truth here",
                       supply=lambda cell: len(rows[cell]))
    picked = pool.iloc[[k for cell in CELLS for k in drawn[cell]]]
    items = pd.DataFrame({
        "item_id": [f"p{k:04d}" for k in range(1, len(picked) + 1)],
        "category": picked["category"].to_numpy(), "level": picked["similarity_level"].to_numpy(),
        "gt_hoi_id": "", "image_id": picked["image_id"].to_numpy(),
        "gt_verb_label": picked["gt_verb"].to_numpy(), "gt_object_label": picked["gt_object"].to_numpy(),
        "gt_verb": picked["gt_verb_synset"].to_numpy(), "gt_object": picked["gt_object_synset"].to_numpy(),
        "pred_verb": picked["pred_verb_synset"].to_numpy(), "pred_object": picked["pred_object_synset"].to_numpy(),
        "verb_sim": np.nan, "object_sim": np.nan, "shoe_sim": np.nan})
    return items[ITEM_COLUMNS], report
