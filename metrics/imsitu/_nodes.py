"""<image, verb> nodes of the two-step sense clustering: their embeddings (a ``.npy`` matrix) and
the CSV naming each row's ``image`` and ``verb`` (Yao, Jarvis & Jiang §3.1). The embeddings are
supplied by the user; no model runs here."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from metrics.core._errors import InputError
from metrics.core._inputs import check_readable, csv_rows, read_text, require_columns
from metrics.core._validation import array_problem


@dataclass
class Nodes:
    """<image, verb> nodes: one embedding row each."""

    embeddings: np.ndarray  # (n, d) float32
    images: np.ndarray      # (n,) str
    verbs: np.ndarray       # (n,) str

    def __len__(self) -> int:
        return len(self.verbs)


def unit_rows(x: np.ndarray, dtype=np.float64) -> np.ndarray:
    """Rows scaled to unit Euclidean length, as scikit-learn's ``normalize(x, norm="l2")`` (the
    released code's call, ``code/clustering_utils.py`` l.66; a zero row stays zero). float64 by
    default: scikit-learn's float32 distance path upcasts in chunks and is slower."""
    from sklearn.preprocessing import normalize

    return normalize(np.asarray(x, dtype=dtype), norm="l2")


def read_nodes(embeddings_path, nodes_path) -> Nodes:
    """The ``.npy`` matrix and the CSV (``image, verb`` per row, header required), validated."""
    embeddings_path, nodes_path = Path(embeddings_path), Path(nodes_path)
    for path in (embeddings_path, nodes_path):
        check_readable(path)
    try:
        with warnings.catch_warnings():  # a header of Python 2's spelling: read, or refused below;
            warnings.simplefilter("ignore", UserWarning)   # a header string with an invalid escape
            warnings.simplefilter("ignore", DeprecationWarning)   # (numpy's literal_eval): refused
            x = np.load(embeddings_path, allow_pickle=False)
    except Exception as exc:  # numpy raises ValueError, OSError, EOFError and pickle errors here
        raise InputError(f"{embeddings_path}: not a .npy array ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    if not isinstance(x, np.ndarray):
        raise InputError(f"{embeddings_path}: an .npz archive, not a .npy array")
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise InputError(f"{embeddings_path}: expected a 2-D matrix (nodes × dimensions), got shape {x.shape}")
    problem = array_problem(x, finite=False)  # non-finite rows are named below
    if problem:
        raise InputError(f"{embeddings_path}: expected numbers; the array {problem}")
    with np.errstate(over="ignore"):  # beyond float32: infinite, refused below as not finite
        x = np.asarray(x, dtype=np.float32)
    images, verbs = [], []
    header, rows = csv_rows(read_text(nodes_path), str(nodes_path))
    require_columns(header, ("image", "verb"), str(nodes_path))
    at = {column: header.index(column) for column in ("image", "verb")}
    for line, fields in rows:
        fields = fields + [""] * (len(header) - len(fields))
        image, verb = fields[at["image"]].strip(), fields[at["verb"]].strip().lower()
        if not image or not verb:
            raise InputError(f"{nodes_path}: line {line}: {'image' if not image else 'verb'} is empty")
        images.append(image)
        verbs.append(verb)
    if len(verbs) != len(x):
        raise InputError(f"{nodes_path}: {len(verbs)} rows but {embeddings_path} has {len(x)} embeddings")
    finite = np.isfinite(x).all(axis=1)
    with np.errstate(invalid="ignore", over="ignore"):  # rows with inf / NaN: refused as not finite
        zero = np.linalg.norm(x.astype(np.float64), axis=1) == 0   # float32's norm of 1e-45s is 0
    bad = np.flatnonzero(~finite | zero)
    if len(bad):
        row = int(bad[0])
        raise InputError(f"{embeddings_path}: row {row} ({nodes_path} line {row + 2}) is "
                         f"{'not finite' if not finite[row] else 'all zeros'}")
    return Nodes(x, np.array(images, dtype=object), np.array(verbs, dtype=object))
