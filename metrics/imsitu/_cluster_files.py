"""Sense-cluster files: the project's clusters JSON and the two shapes the authors' released code
writes, read into one :class:`SenseClusters` and written from a clustering.

Shapes (``ruyi101/multimodal-verb-sense-anonymous``; docs/contracts.md, "Other inputs"):

- the project's JSON ``{"clusters": {id: [verbs]}, "images": {image: [ids]}}`` (``meta``
  optional);
- the released results JSON ``results/results_<model>_<algorithm>.json`` (written by
  ``generate_final_results.ipynb``, cells 2–4): ``{image: [target verbs]}``, the verbs of every
  final cluster that holds one of the image's <image, verb> nodes. It keeps each image's targets
  but not the clusters, so the cluster criterion can be scored and the Top-1 breakdown (Table 4,
  which needs to know which cluster holds the gold verb) cannot: ``per_cluster`` is False;
- the released step-2 CSV ``<dataset>_step2_<method>_cosine.csv`` (``code/clustering.py``
  l.111 and 159–163): one row per step-1 cluster, ``verbs, cluster, image, …, final_cluster``,
  where ``image`` is the Python list of the cluster's images as pandas writes it
  (``"['a.jpg', 'b.jpg']"``) and ``final_cluster`` the step-2 cluster. Final cluster ``f`` holds
  the verbs of its rows; an image lies in the final clusters of the rows that list it — the
  notebook's reading (cells 2–3).

The writers produce the released step-1 CSV (``code/clustering.py`` l.85–91: the nodes of each
verb, verbs in sorted order, with their step-1 ``cluster``), the step-2 CSV and the results JSON
(targets sorted; the notebook's ``list(set(...))`` order is arbitrary).
"""

from __future__ import annotations

import ast
import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from metrics.core._errors import InputError
from metrics.core._inputs import csv_rows, read_json, read_text, require_columns
from metrics.imsitu._readers import _verb_list
from metrics.imsitu._verbs import normalize_verb

STEP2_COLUMNS = ("verbs", "image", "final_cluster")


@dataclass(frozen=True)
class SenseClusters:
    """Sense clusters: verbs per cluster and clusters per image.

    ``per_cluster`` is False when only each image's target verbs are known (the released results
    JSON): each image then has one cluster of its own holding its targets.
    """

    clusters: dict[str, frozenset[str]]
    images: dict[str, tuple[str, ...]]
    meta: dict = field(default_factory=dict)
    per_cluster: bool = True

    def image_verbs(self, image: str) -> frozenset[str]:
        """Every verb of every cluster that contains the image."""
        return frozenset().union(*(self.clusters[c] for c in self.images.get(image, ())))

    def to_dict(self) -> dict:
        out = {"clusters": {c: sorted(v) for c, v in self.clusters.items()},
               "images": {i: list(c) for i, c in self.images.items()}}
        if self.meta:
            out["meta"] = self.meta
        return out


def _is_project_shape(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("clusters"), dict) \
        and isinstance(data.get("images"), dict)


def parse_clusters(data, source: str = "clusters") -> SenseClusters:
    """The project's clusters JSON or the released ``{image: [target verbs]}`` (validated)."""
    if not isinstance(data, dict) or not data:
        raise InputError(f"{source}: expected {{'clusters': {{id: [verbs]}}, 'images': {{image: [ids]}}}} "
                         "or the released {image: [target verbs]}")
    if not _is_project_shape(data):
        return parse_image_targets(data, source)
    clusters = {str(c): frozenset(_verb_list(v, f"{source}: cluster {c!r}", False))
                for c, v in data["clusters"].items()}
    images = {}
    for image, ids in data["images"].items():
        if not isinstance(ids, list):
            raise InputError(f"{source}: image {image!r}: expected a list of cluster ids, got {ids!r:.60}")
        for c in ids:
            if str(c) not in clusters:
                raise InputError(f"{source}: image {image!r}: unknown cluster id {c!r}")
        images[str(image)] = tuple(dict.fromkeys(str(c) for c in ids))
    meta = data["meta"] if isinstance(data.get("meta"), dict) else {}
    return SenseClusters(clusters, images, meta)


def parse_image_targets(data: dict, source: str = "clusters") -> SenseClusters:
    """The released results JSON ``{image: [target verbs]}``: one cluster per image."""
    clusters: dict[str, frozenset[str]] = {}
    for image, targets in data.items():
        if not isinstance(targets, list):
            raise InputError(f"{source}: image {image!r}: expected a list of target verbs (the released "
                             f"results JSON) or the keys 'clusters' and 'images', got {targets!r:.60}")
        clusters[str(image)] = frozenset(_verb_list(targets, f"{source}: image {image!r}: targets", True))
    images: dict[str, tuple[str, ...]] = {image: (image,) for image in clusters}
    return SenseClusters(clusters, images, {"format": "released results JSON"}, per_cluster=False)


def _image_list(text: str, where: str) -> list[str]:
    """A step-2 CSV ``image`` cell: a Python list literal of names, or a single name."""
    text = text.strip()
    if not text.startswith("["):
        if not text:
            raise InputError(f"{where}: image is empty")
        return [text]
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise InputError(f"{where}: image {text[:60]!r} is not a list of image names") from None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(f"{where}: image must be a non-empty list of image names, got {text[:60]!r}")
    return [v.strip() for v in value]


def read_step2_csv(path) -> SenseClusters:
    """The released step-2 CSV (``verbs, cluster, image, …, final_cluster``) as sense clusters."""
    header, rows = csv_rows(read_text(path), str(path))
    require_columns(header, STEP2_COLUMNS, str(path),
                    why="the released step-2 CSV: verbs, cluster, image, …, final_cluster")
    at = {column: header.index(column) for column in STEP2_COLUMNS}
    verbs: dict[str, set[str]] = {}
    images: dict[str, dict[str, None]] = {}
    for line, fields in rows:
        fields = fields + [""] * (len(header) - len(fields))
        where = f"{path}: line {line}"
        verb = normalize_verb(fields[at["verbs"]])
        final = fields[at["final_cluster"]].strip()
        if not verb:
            raise InputError(f"{where}: verbs is empty")
        if not final.lstrip("-").isdigit():
            raise InputError(f"{where}: final_cluster {final[:30]!r} is not a whole number")
        final = str(int(final))
        verbs.setdefault(final, set()).add(verb)
        for image in _image_list(fields[at["image"]], where):
            images.setdefault(image, {})[final] = None
    if not verbs:
        raise InputError(f"{path}: no rows")
    return SenseClusters({c: frozenset(v) for c, v in verbs.items()},
                         {i: tuple(ids) for i, ids in images.items()},
                         {"format": "released step-2 CSV"})


def read_clusters(path) -> SenseClusters:
    """Sense clusters from any of the three shapes: a ``.csv`` is the released step-2 CSV, any
    other file the project's JSON or the released results JSON."""
    if Path(path).suffix.lower() == ".csv":
        return read_step2_csv(path)
    return parse_clusters(read_json(path), str(path))


# ---------------------------------------------------------------------------------- writing
def _csv_text(header: list[str], rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def released_files(node_images: np.ndarray, node_verbs: np.ndarray, step1_local: np.ndarray,
                   step1_labels: np.ndarray, step2_raw: np.ndarray) -> dict[str, str]:
    """The released code's three outputs as text: ``step1`` CSV, ``step2`` CSV, ``results`` JSON.

    ``step1_local``: each node's step-1 cluster within its verb as the algorithm numbered it;
    ``step1_labels``: the global step-1 cluster, numbered by (verb, local cluster) — the row order
    of the step-2 CSV; ``step2_raw``: the step-2 cluster of each global step-1 cluster.
    """
    images, verbs = [str(i) for i in node_images], [str(v) for v in node_verbs]
    order = sorted(range(len(verbs)), key=lambda i: (verbs[i], i))   # verbs sorted, file order within a verb
    step1 = _csv_text(["verbs", "image", "cluster"],
                      ([verbs[i], images[i], int(step1_local[i])] for i in order))
    members: dict[int, list[int]] = {}
    for i in order:
        members.setdefault(int(step1_labels[i]), []).append(int(i))
    step2_rows = []
    for g in sorted(members):
        rows = members[g]
        step2_rows.append([verbs[rows[0]], int(step1_local[rows[0]]), str([images[i] for i in rows]),
                           int(step2_raw[g])])
    step2 = _csv_text(["verbs", "cluster", "image", "final_cluster"], step2_rows)
    final_verbs: dict[int, set[str]] = {}
    for g, rows in members.items():
        final_verbs.setdefault(int(step2_raw[g]), set()).add(verbs[rows[0]])
    targets: dict[str, set[str]] = {}
    for g, rows in members.items():
        for i in rows:
            targets.setdefault(images[i], set()).update(final_verbs[int(step2_raw[g])])
    results = json.dumps({image: sorted(t) for image, t in sorted(targets.items())}) + "\n"
    return {"step1": step1, "step2": step2, "results": results}
