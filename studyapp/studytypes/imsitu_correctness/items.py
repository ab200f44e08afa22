"""Items of an imSitu correctness study, built from a model's predictions.

Items come from

- an imSitu examples folder (``images/*.jpg`` + ``predictions/*.predictions``, one model's
  ranked verbs per image; the gold verb is the image name's prefix, ``jumping_10.jpg``), or
- a predictions JSON, ``{model: {image: [ranked verbs]}}`` (several models), or
  ``{image: [ranked verbs]}`` with the model named by the spec's ``model`` option; gold verbs
  from the ``gold`` option (JSON image → verb), else from imSitu image names when every image
  has one,

with images served from the study's ``image_root``. One item is (image, model); the items are
shuffled with the spec's seed and get opaque ids (``q0001`` …), so neither the order nor the id
reveals the model, and the model is never shown to annotators.
"""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd

from metrics import InputError
from metrics.core import at_least_problem
from metrics.imsitu import gold_from_image_names, read_clusters, read_examples_predictions, read_gold
from studyapp.core import images


def _predictions_json(path: Path, model: str | None) -> dict[str, dict[str, list[str]]]:
    from metrics.core import read_json
    from metrics.imsitu import parse_predictions

    data = read_json(path)
    if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
        return {str(m): parse_predictions(per, source=f"{path}: model {m!r}") for m, per in data.items()}
    if not model:
        raise InputError(f"{path}: maps images to verbs, so the spec needs 'items.model' "
                         "(or give {model: {image: [verbs]}})")
    return {model: parse_predictions(data, source=str(path))}


def _check_item_options(options: dict) -> int:
    """Check the model, the source keys and k; returns k."""
    model = options.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise InputError("key 'items.model' must be a non-empty string")
    if ("examples" in options) == ("predictions" in options):
        raise InputError("[items] of an imsitu_correctness study needs exactly one of "
                         "'examples' (an imSitu examples folder) and 'predictions' (JSON)")
    k = options.get("k", 5)
    if problem := at_least_problem(k, 1):
        raise InputError(f"key 'items.k' {problem}")
    return k


def _predictions_source(options: dict, base_dir: Path) -> tuple[dict, Path, str]:
    """The predictions per model, the images' folder and a description of the source."""
    model = options.get("model")
    if "examples" in options:
        folder = (base_dir / options["examples"]).resolve()
        per_model = {model or "baseline": read_examples_predictions(folder / "predictions")}
        root = (base_dir / options["image_root"]).resolve() if "image_root" in options else folder / "images"
        return per_model, root, f"imSitu examples {folder}"
    per_model = _predictions_json(base_dir / options["predictions"], model)
    if "image_root" not in options:
        raise InputError("[items] with 'predictions' needs 'image_root' (the images' folder)")
    return per_model, (base_dir / options["image_root"]).resolve(), f"predictions {options['predictions']}"


def _gold_verbs(options: dict, base_dir: Path, all_images: list[str]) -> dict:
    """The gold verbs: a gold file, else from imSitu image names (<verb>_<n>.jpg)."""
    if "gold" in options:
        return read_gold(base_dir / options["gold"])
    if "examples" in options:
        return gold_from_image_names(all_images)
    try:  # imSitu-named images carry their gold verb; other names have none
        return gold_from_image_names(all_images)
    except InputError:
        return {}


def _check_image_files(root: Path, all_images: list[str]) -> None:
    check = images.check_images(root, all_images)
    if check.problems:
        path, status, message = check.problems[0]
        raise InputError(f"image {path!r} under {root}: {message or status} "
                         f"({len(check.problems)} of {len(all_images)} images have problems)")


def _item_rows(per_model: dict, root: Path, source: str, k: int, gold: dict, clusters) -> list[dict]:
    """One row per model and image: its top-k verbs, the gold verbs and the image's clusters."""
    rows = []
    for model_name, per in per_model.items():
        for image, verbs in per.items():
            if not verbs:
                raise InputError(f"{source}: model {model_name!r}, image {image!r} has no predictions")
            row = {"image": image, "image_root": str(root), "model": model_name,
                   "predictions": verbs[:k], "gold": list(gold.get(image, ()))}
            if clusters is not None:
                row["clusters"] = {c: sorted(clusters.clusters[c]) for c in clusters.images.get(image, ())}
            rows.append(row)
    return rows


def build_items(options: dict, base_dir: Path) -> tuple[pd.DataFrame, str]:
    """Items (one per image and model) from the ``[items]`` options of a spec, and a report."""
    k = _check_item_options(options)
    per_model, root, source = _predictions_source(options, base_dir)
    if not root.is_dir():
        raise InputError(f"key 'items.image_root' names no folder: {root}")
    all_images = sorted({image for per in per_model.values() for image in per})
    gold = _gold_verbs(options, base_dir, all_images)
    clusters = read_clusters(base_dir / options["clusters"]) if "clusters" in options else None
    _check_image_files(root, all_images)
    rows = _item_rows(per_model, root, source, k, gold, clusters)
    random.Random(options.get("seed", 0)).shuffle(rows)
    for n, row in enumerate(rows, 1):
        row["item_id"] = f"q{n:04d}"
    report = (f"{len(rows)} items: {len(all_images)} images × {len(per_model)} model(s) "
              f"({', '.join(per_model)}), top-{k} shown, from {source}; images under {root}"
              + (f"; gold verbs for {sum(1 for i in all_images if i in gold)} images" if gold else "; no gold verbs")
              + ("; sense clusters attached" if clusters is not None else ""))
    return pd.DataFrame(rows), report
