"""Resolve the verb / object labels of HOI detections for scoring.

A label may be a dataset label (``ride``, ``dining table``), a WordNet synset name
(``ride.v.01``) or free text (``riding``). Work is done once per *distinct* label, never per
detection.

- **Ground truth** resolves context-free: a dataset label to its curated synset, a synset
  name to itself, free text to its first candidate synset (WordNet's most common sense of the
  whole phrase). A dataset label without a synset (``no_interaction``) stands for itself.
- **Predictions** are compared with each ground-truth label through synset matching
  (:mod:`metrics.vocab._matching`): the similarity of a predicted text to a ground-truth synset is the
  highest similarity of any of its candidate synsets (a label or synset name has one
  candidate). This is a small table ``predicted text × ground-truth label``, so a detection's
  similarity to a ground truth is one array lookup. Because every combination ``f`` of SHOE
  Eq. 1 is non-decreasing in both arguments, choosing the verb and the object candidate
  separately gives the best HOI similarity.
- **Unknown** text (no synset candidate) scores similarity 0 against everything, and is listed.

Exact class identity (standard mAP) uses a *class key* per label: the dataset label when the
text is one, else the dataset label whose curated synset it resolves to (the first such label
in vocabulary order, e.g. ``sit.v.01`` → ``sit_at``, since ``sit_at`` and ``sit_on`` share it),
else the synset name itself. Free text resolves, for this purpose, to its first candidate
synset that is the synset of some ground-truth label of the evaluation set (synset matching
against the ground truth at dataset level: ``flying`` → ``fly.v.03``, HICO's ``fly``, although
WordNet's first sense is ``fly.v.01``), else to its first candidate. So two dataset labels are
equal exactly when they are the same label (HICO-DET class id equality), and synset names or
free text are equal to a dataset label when they resolve to its synset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.vocab._matching import classify
from metrics.vocab._similarity import SimilarityMatrix

UNKNOWN_KEY = "\x00unknown"


@dataclass
class ResolvedLabels:
    """Distinct labels of one role (verbs or objects) of ground truth and predictions.

    ``gt_code`` / ``pred_code`` index ``gt_texts`` / ``pred_texts`` per detection;
    ``table[i, j]`` is the similarity in [0, 1] of predicted text i to ground-truth text j;
    ``gt_class_key`` / ``pred_class_key`` are the class keys (None: unknown prediction).
    """

    gt_texts: np.ndarray
    gt_code: np.ndarray
    gt_kind: list[str]
    gt_synset: list[str | None]
    gt_class_key: list[str]
    pred_texts: np.ndarray
    pred_code: np.ndarray
    pred_kind: list[str]
    pred_synset: list[str | None]
    pred_n_candidates: list[int]
    pred_class_key: list[str | None]
    table: np.ndarray

    def report(self, role: str) -> dict:
        """How the labels resolved: counts by kind, free text → synset, unknown texts."""
        out = {}
        for side, texts, kinds, synsets, codes in (
                ("gt", self.gt_texts, self.gt_kind, self.gt_synset, self.gt_code),
                ("pred", self.pred_texts, self.pred_kind, self.pred_synset, self.pred_code)):
            uses = np.bincount(codes, minlength=len(texts))
            by_kind = {k: {"labels": 0, "detections": 0} for k in ("label", "synset", "free_text", "unknown")}
            free, unknown = {}, []
            for t, k, s, u in zip(texts.tolist(), kinds, synsets, uses.tolist()):
                by_kind[k]["labels"] += 1
                by_kind[k]["detections"] += int(u)
                if k == "free_text":
                    free[t] = s
                elif k == "unknown":
                    unknown.append(t)
            out[side] = {"n_labels": len(texts), "by_kind": by_kind, "free_text": free,
                         "unknown": sorted(unknown)}
        return out


def _label_synsets(table: pd.DataFrame) -> dict[str, str]:
    """``{dataset label: synset}`` of a vocabulary table (the first row of a repeated label)."""
    out: dict[str, str] = {}
    for label, synset in zip(table["label"].tolist(), table["synset"].tolist()):
        out.setdefault(label, synset)
    return out


def _hico_label(text: str, labels: dict[str, str]) -> tuple[str, str] | None:
    key = text.strip().lower().replace(" ", "_")
    return (key, labels[key]) if key in labels else None


def resolve_one(text: str, pos: str, vocabulary, *,
                labels: dict[str, str] | None = None) -> tuple[str, tuple[str, ...], str | None]:
    """``(kind, candidate synsets/keys, class key)`` of one label (see the module docstring).

    ``labels``: the vocabulary's ``{label: synset}`` for ``pos``, when the caller has it."""
    if vocabulary is not None and labels is None:
        labels = _label_synsets(vocabulary.verbs if pos == "v" else vocabulary.objects)
    if labels is not None:
        hit = _hico_label(text, labels)
        if hit is not None:
            label, synset = hit
            return "label", ((synset or label),), label
    kind, cands = classify(text, pos, vocabulary)
    if not cands:
        return "unknown", (), None
    first_label = vocabulary.label_of_synset(cands[0], pos) if vocabulary is not None else None
    return kind, tuple(cands), first_label or cands[0]


def factorize_labels(labels) -> tuple[np.ndarray, np.ndarray]:
    """``(code per row, distinct texts in order of first appearance)`` of a label column.

    >>> codes, texts = factorize_labels(["ride", "".join(["ri", "de"]), "hold"])
    >>> codes.tolist(), texts.tolist()
    ([0, 0, 1], ['ride', 'hold'])
    """
    codes, texts = pd.factorize(np.asarray(labels, dtype=object))
    return codes.astype(np.int64), np.asarray(texts, dtype=object)


def resolve_labels(gt_labels, pred_labels, pos: str, matrix: SimilarityMatrix,
                   vocabulary, *, where=None) -> ResolvedLabels:
    """Resolve the ground-truth and predicted labels of one role (``pos`` ``"v"`` or ``"n"``).

    ``where(side, row)`` names the detection of an error (file, line, field).
    """
    gt_code, gt_texts = factorize_labels(gt_labels)
    pred_code, pred_texts = factorize_labels(pred_labels)

    labels = None if vocabulary is None else _label_synsets(vocabulary.verbs if pos == "v" else vocabulary.objects)

    def _resolve(side, texts, codes):
        out = []
        for i, t in enumerate(texts.tolist()):
            try:
                out.append(resolve_one(t, pos, vocabulary, labels=labels))
            except InputError as exc:
                row = int(np.flatnonzero(codes == i)[0])
                prefix = where(side, row) if where else f"{side} label {t!r}"
                raise InputError(f"{prefix}: {exc}") from None
        return out

    gt_res = _resolve("gt", gt_texts, gt_code)
    pred_res = _resolve("pred", pred_texts, pred_code)
    # free text's class key: its first candidate that is a ground-truth synset, if any
    gt_key_of_synset: dict[str, str] = {}
    for _, c, key in gt_res:
        if c and key is not None:
            gt_key_of_synset.setdefault(c[0], key)
    pred_res = [(kind, c, next((gt_key_of_synset[x] for x in c if x in gt_key_of_synset), key))
                if kind == "free_text" else (kind, c, key) for kind, c, key in pred_res]
    gt_kind = [k for k, _, _ in gt_res]
    gt_synset = [c[0] if c else None for _, c, _ in gt_res]
    gt_key = np.array([c[0] if c else UNKNOWN_KEY + str(j) for j, (_, c, _) in enumerate(gt_res)], dtype=object)
    gt_class_key = [key if key is not None else "text:" + t.strip().lower()
                    for (_, _, key), t in zip(gt_res, gt_texts.tolist())]

    sizes = np.array([len(c) for _, c, _ in pred_res], dtype=np.int64)
    table = np.zeros((len(pred_texts), len(gt_texts)))
    if sizes.sum() and len(gt_texts):
        flat = np.array([x for _, c, _ in pred_res for x in c], dtype=object)
        sims = matrix.sims(flat[:, None], gt_key[None, :])
        sims[:, [k.startswith(UNKNOWN_KEY) for k in gt_key]] = 0.0
        has = np.flatnonzero(sizes > 0)
        starts = np.cumsum(sizes) - sizes
        table[has] = np.maximum.reduceat(sims, starts[has], axis=0)
    _zero_role_swaps(table, vocabulary, pos, gt_res, pred_res)
    return ResolvedLabels(
        gt_texts=gt_texts, gt_code=gt_code.astype(np.int64), gt_kind=gt_kind, gt_synset=gt_synset,
        gt_class_key=gt_class_key, pred_texts=pred_texts, pred_code=pred_code.astype(np.int64),
        pred_kind=[k for k, _, _ in pred_res], pred_synset=[c[0] if c else None for _, c, _ in pred_res],
        pred_n_candidates=sizes.tolist(), pred_class_key=[key for _, _, key in pred_res], table=table)


def _zero_role_swaps(table, vocabulary, pos, gt_res, pred_res) -> None:
    """Roles are part of the label: a predicted dataset label whose role differs from a
    ground-truth label's (``hit-obj`` for ``hit-instr``) has similarity 0 to it, whatever their
    synsets (docs/method.md, "Roles"). Labels without a role (free text, synset names, datasets
    without a ``role`` column) are left as the matrix scores them."""
    roles_table = None if vocabulary is None or pos != "v" else vocabulary.verbs
    if roles_table is None or "role" not in roles_table:
        return
    role_of = dict(zip(roles_table["label"], roles_table["role"]))

    def roles(resolved):
        return np.array([role_of.get(key, "") if kind == "label" else "" for kind, _, key in resolved], dtype=object)
    gt_role, pred_role = roles(gt_res), roles(pred_res)
    swapped = (pred_role[:, None] != gt_role[None, :]) & (pred_role[:, None] != "") & (gt_role[None, :] != "")
    table[swapped] = 0.0


def label_pairs(v_code, o_code, n_o):
    """Distinct (verb, object) label-code pairs of detections: ``(pair per detection, verb
    code per pair, object code per pair)``, pairs in order of first appearance."""
    combo, uniq = pd.factorize(np.asarray(v_code, dtype=np.int64) * n_o + np.asarray(o_code, dtype=np.int64))
    uniq = np.asarray(uniq, dtype=np.int64)
    return combo.astype(np.int64), uniq // n_o, uniq % n_o


def classes_of(combo, v, o, v_key, o_key, class_of_key=None):
    """Class index of each detection from its label pair (:func:`label_pairs`), working on
    the distinct pairs only. Without ``class_of_key`` the classes are created in order of
    first appearance; with it, unknown pairs get −1."""
    keys = [(v_key[a], o_key[b]) for a, b in zip(v.tolist(), o.tolist())]
    class_keys: list[tuple[str, str]] | None = None
    if class_of_key is None:
        class_of_key, class_keys = {}, []
        for k in keys:
            if k not in class_of_key:
                class_of_key[k] = len(class_keys)
                class_keys.append(k)
    per_combo = np.array([class_of_key.get(k, -1) for k in keys], dtype=np.int64)
    return (per_combo[combo] if len(combo) else np.zeros(0, np.int64)), class_keys


def class_table(class_keys: list, vocabulary) -> pd.DataFrame:
    """Class keys with their HICO-DET id, rare flag and zero-shot flags (NaN outside HICO)."""
    frame = pd.DataFrame({"verb": [str(v) for v, _ in class_keys], "object": [str(o) for _, o in class_keys]})
    return frame.merge(vocabulary.classes, on=["verb", "object"], how="left")
