"""Readers of imSitu verb inputs: gold verbs, ranked predictions (JSON or a folder of imSitu
``*.predictions`` files), and gold from imSitu image names.

- gold: ``{image: verb}`` or ``{image: [verbs]}``;
- predictions: ``{image: [verb, ...]}`` ranked best first (imSitu gerunds, ``jumping``), or a
  folder of imSitu ``*.predictions`` files (a JSON list of ``{"verb", "score", "frames"}``;
  ranked here by descending score, ties in file order).

The sense clusters are read by :mod:`metrics.imsitu._cluster_files`.
"""

from __future__ import annotations

import math
from pathlib import Path

from metrics.core._errors import InputError
from metrics.core._inputs import read_json
from metrics.imsitu._verbs import normalize_verb


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


def split_verbs(value) -> list[str]:
    """A list of verbs, or a ``;``-joined string of them."""
    if isinstance(value, (list, tuple)):
        return [normalize_verb(v) for v in value]
    return [normalize_verb(v) for v in str(value).split(";") if v.strip()]
