"""Models scored in the console: one ground truth, several prediction files, the
baseline matrices and saved matrix versions side by side.

Every figure is ``python -m metrics score``'s with its default options: the same reader
(:func:`metrics.detection.read_detections`, JSON Lines or the QPIC format, errors naming the
file, line and field) and the same scorer (:func:`metrics.detection.score_dict`), with the
version's matrices as ``--verb-sim`` / ``--object-sim`` would give them, and ``--dataset`` the
dataset the versions were recalibrated for (their studies' ``[items] dataset``; HICO-DET for the
baseline alone): its labels are read and its baseline matrices are the baseline row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from metrics import InputError, datasets
from metrics.core import json_text
from metrics.detection import read_detections

from ...core.accounts import CLI, Actor, require
from ...core.storage import log_event, write_session
from .matrix_versions import load_version

BASELINE = "baseline (WordNet)"


@dataclass
class ModelScores:
    """``results[model][matrices]``: the full result of ``metrics score``; ``table``: one row per
    model and matrices."""

    results: dict[str, dict[str, dict]]
    table: pd.DataFrame
    studies: list[str] = field(default_factory=list)   # behind the matrix versions used

    def to_json(self) -> str:
        return json_text({"models": self.results}) + "\n"


def summary_row(model: str, matrices: str, result: dict) -> dict:
    """The figures of one result, in % as the command prints them."""
    def pct(value):
        return None if value is None else round(100 * value, 2)

    official = result["hico"]["default"] if result["hico"] else {}
    return {"model": model, "matrices": matrices, "mAP (Full)": pct(official.get("full")),
            "mAP (Rare)": pct(official.get("rare")), "mAP (Non-rare)": pct(official.get("non_rare")),
            "SHOE mAP": pct(result["shoe_map"]), "SHOE mF1": pct(result["shoe_mf1"]),
            "GT miss rate": pct(result["gt_miss_rate"]), "prediction miss rate": pct(result["pred_miss_rate"])}


def score_models(gt: str | Path, predictions: dict[str, str | Path], versions: list[str] = (), *,
                 progress: Callable[[float, str], None] | None = None, actor: Actor = CLI,
                 dataset: str | None = None) -> ModelScores:
    """Score each prediction file (``{model name: path}``) against ``gt`` with the baseline
    matrices and each saved matrix version; ``progress(fraction, text)`` after each step. The
    labels are ``dataset``'s (default: the versions' dataset, HICO-DET without versions);
    versions of another dataset are refused, as are versions ``actor`` may not see. The audit log
    records who scored which files; the scores belong to ``actor``."""
    from metrics.detection import score_dict

    require(actor, "score")
    if not predictions:
        raise InputError("give at least one predictions file")
    matrices, studies = {BASELINE: (None, None)}, []
    for name in versions:
        verb, obj, provenance = load_version(name, actor=actor)   # a version the actor may see
        studies += [slug for slug in provenance["studies"] if slug not in studies]
        own = provenance.get("dataset", datasets.DEFAULT)   # versions saved before datasets: HICO-DET's
        if dataset is None:
            dataset = own
        if own != dataset:
            raise InputError(f"matrix version {name!r} holds {own} matrices, not {dataset} ones: "
                             "score each dataset's versions apart")
        matrices[f"version {name}"] = (verb, obj)
    dataset = None if dataset in (None, datasets.DEFAULT) else dataset   # HICO-DET, the default: no name
    truth = read_detections(gt)
    steps, done = len(predictions) * len(matrices), 0
    results: dict[str, dict[str, dict]] = {}
    rows = []
    for model, path in predictions.items():
        pred = read_detections(path)
        for label, (verb, obj) in matrices.items():
            if progress:
                progress(done / steps, f"scoring {model} with the {label} matrices")
            result = score_dict(truth, pred, verb_sim=verb, object_sim=obj, dataset=dataset)
            results.setdefault(model, {})[label] = result
            rows.append(summary_row(model, label, result))
            done += 1
    with write_session() as session:
        log_event(session, "models_scored", actor=actor.name, ground_truth=Path(gt).name,
                  models={m: Path(p).name for m, p in predictions.items()}, versions=list(versions))
    if progress:
        progress(1.0, f"scored {len(predictions)} model(s) with {len(matrices)} set(s) of matrices")
    return ModelScores(results, pd.DataFrame(rows), studies)
