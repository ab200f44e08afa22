"""Recalibrated similarity matrices as named, immutable versions with their provenance.

``recalibrate_studies`` pools the main ratings of one or more HOI-pair studies of one dataset
(``[items] dataset``) and runs :func:`metrics.study.recalibrate_matrices` (cross-validated:
held-out agreement before / after, overall and per category) on that dataset's baseline matrices
(or on an earlier version of the same dataset). ``save_version`` stores both matrices under a
new name in the database (``matrix_version``; a name is never reused or overwritten), so backups
carry them; ``export_version`` writes them as the
``.csv`` / ``.npz`` files ``python -m metrics score --verb-sim / --object-sim`` read.

A version belongs to the account that saved it (``accounts.may`` decides who sees, downloads or
compares it: its owner, accounts it is shared with, the platform owner; viewers see every one).
"""

from __future__ import annotations

import base64
import io
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from metrics import InputError, datasets
from metrics.core import write_text_atomic
from metrics.study import join_ratings, recalibrate_matrices
from metrics.vocab import SimilarityMatrix, load_default

from ...core.accounts import CLI, Actor, may, require, require_studies
from ...core.models import MatrixVersion, Study
from ...core.storage import log_event, read_session, write_session
from ...studytypes import get_type
from ..records.exports import study_tables
from ..specs.spec_model import spec_of

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
PAIR_COLUMNS = ("gt_verb", "gt_object", "pred_verb", "pred_object")
ROLES = ("verb", "object")


@dataclass
class Recalibration:
    """What a run produced, before it is saved: the new matrices and their evidence."""

    studies: list[str]
    result: dict            # metrics.study.recalibrate_matrices's result
    changed: pd.DataFrame   # the rated pairs, most changed first
    based_on: str           # "baseline" or the version recalibrated
    dataset: str = datasets.DEFAULT  # whose vocabulary the studies' items use
    seen_by_base: list[str] = field(default_factory=list)  # studies the based-on matrices already learnt from

    def before_note(self) -> str | None:
        """Why the "before" agreement is not held out, or None: the based-on version was itself
        recalibrated from some of these studies, so its matrices have seen their ratings."""
        if not self.seen_by_base:
            return None
        return (f"'before' is not held out: version {self.based_on!r} was recalibrated from "
                f"{', '.join(self.seen_by_base)} already, so its agreement on these ratings is in-sample "
                "(the folds hold out ratings from the new fit only)")

    def provenance(self) -> dict:
        r = self.result
        # a HICO-DET version's provenance has no dataset key: HICO-DET is the default
        dataset = {} if self.dataset == datasets.DEFAULT else {"dataset": self.dataset}
        return {"studies": self.studies, **dataset, "based_on": self.based_on, "n_items": r["n_items"],
                "n_ratings": r["n_ratings"], "method": r["method"], "parameters": r["parameters"],
                "held_out": {"before": r["before"], "after": r["after"],
                             "by_category": r["by_category"]}}


def rated_items(studies: list[Study], engine: Engine | None = None) -> pd.DataFrame:
    """The main items of the studies with their mean rating (``human_mean``, ``n_ratings``)."""
    if not studies:
        raise InputError("choose at least one study to recalibrate from")
    frames = []
    for study in studies:
        slug = study.slug
        if not get_type(study.study_type).recalibrates_matrices:
            raise InputError(f"study {slug}: not an HOI-pair study (the ratings of a "
                             f"{study.study_type} study do not recalibrate the similarity matrices)")
        tables = study_tables(slug, engine)
        items, ratings = tables["items.csv"], tables["ratings.csv"]
        ratings = ratings[(ratings["phase"] == "main") & (ratings["rating"].astype(str) != "cant_judge")]
        if ratings.empty:
            raise InputError(f"study {slug}: no main ratings yet")
        items = items[items["role"] == "main"].astype({"item_id": str})
        rated = join_ratings(items[["item_id", *PAIR_COLUMNS]], ratings.astype({"item_id": str}))
        rated["item_id"] = slug + ":" + rated["item_id"]
        frames.append(rated)
    return pd.concat(frames, ignore_index=True)


def recalibrate_studies(slugs: list[str], *, based_on: str | None = None, w: float = 0.5,
                        prior_strength: float = 5.0, folds: int = 5, seed: int = 0,
                        engine: Engine | None = None, actor: Actor = CLI) -> Recalibration:
    """Recalibrate the baseline matrices (or version ``based_on``) from the studies' ratings
    (studies ``actor`` may change: a researcher's own)."""
    chosen = require_studies(actor, "change", slugs, engine)
    if based_on:
        version_row(based_on, engine, actor=actor)   # one the actor may see, before any rating is read
    dataset = studies_dataset(chosen)
    items = rated_items(chosen, engine)
    seen = []
    if based_on:
        verb, obj, provenance = load_version(based_on, engine, actor=actor)
        own = provenance.get("dataset", datasets.DEFAULT)  # versions saved before datasets: HICO-DET's
        if own != dataset:
            raise InputError(f"matrix version {based_on!r} holds {own} matrices, but the studies are "
                             f"over {dataset}")
        seen = [slug for slug in slugs if slug in studies_behind(based_on, engine)]
    else:
        verb, obj = load_default("v", dataset=dataset), load_default("n", dataset=dataset)
    result = recalibrate_matrices(items, verb, obj, w=w, prior_strength=prior_strength, folds=folds,
                         seed=seed, study=",".join(slugs))
    return Recalibration(list(slugs), result, _most_changed(result, {"verb": verb, "object": obj}),
                         based_on or "baseline", dataset, seen)


def studies_behind(name: str, engine: Engine | None = None) -> set[str]:
    """Every study whose ratings went into version ``name``, through its chain of based-on versions."""
    behind: set[str] = set()
    with read_session(engine) as session:   # the provenance alone: no matrix is decoded
        while name and name != "baseline":
            text = session.exec(select(MatrixVersion.provenance_json).where(MatrixVersion.name == name)).first()
            if text is None:
                raise InputError(f"no matrix version named {name!r} (see `python -m studyapp matrices list`)")
            provenance = json.loads(text)
            behind.update(provenance["studies"])
            name = provenance.get("based_on")
    return behind


def studies_dataset(chosen: list[Study]) -> str:
    """The one dataset the studies' items use (``[items] dataset``); studies over different
    datasets are refused (their synsets and baselines differ)."""
    names = {study.slug: spec_of(study).dataset for study in chosen}
    if len(set(names.values())) > 1:
        listed = ", ".join(f"{slug} ({name})" for slug, name in names.items())
        raise InputError(f"the studies are over different datasets ({listed}): recalibrate each dataset's apart")
    return next(iter(names.values()), datasets.DEFAULT)


def _most_changed(result: dict, old: dict[str, SimilarityMatrix]) -> pd.DataFrame:
    rows = []
    for role in ROLES:
        ev = result["evidence"][role]
        new = result[role].sims(ev.a, ev.b)
        rows.append(pd.DataFrame({"matrix": role, "a": ev.a, "b": ev.b,
                                  "before": old[role].sims(ev.a, ev.b), "after": new,
                                  "human_evidence": ev.implied, "ratings": ev.weight}))
    table = pd.concat(rows, ignore_index=True)
    table["change"] = table["after"] - table["before"]
    return table.reindex(table["change"].abs().sort_values(ascending=False, kind="stable").index)


def _matrix_text(matrix: SimilarityMatrix) -> str:
    """The matrix as its ``.npz`` file (exact), base64-encoded so backups (JSON rows) hold it."""
    buffer = io.BytesIO()
    matrix.write_npz(buffer)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _matrix_from_text(text: str, what: str) -> SimilarityMatrix:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{what}.npz"
        path.write_bytes(base64.b64decode(text))
        return SimilarityMatrix.load(path)


def save_version(name: str, run: Recalibration, engine: Engine | None = None, *,
                 actor: Actor = CLI) -> MatrixVersion:
    """Store the run's matrices as version ``name`` (refused when the name exists)."""
    require_studies(actor, "change", run.studies, engine)
    if not NAME.fullmatch(name or ""):
        raise InputError(f"version name {name!r}: use 1-64 letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit")
    for role in ("verb", "object"):   # the version's name travels in the matrices' provenance (score --json)
        run.result[role].meta["version"] = name
    version = MatrixVersion(name=name, provenance_json=json.dumps(run.provenance()), owner=actor.name,
                            verb_npz=_matrix_text(run.result["verb"]),
                            object_npz=_matrix_text(run.result["object"]))
    try:
        with write_session(engine) as session:
            session.add(version)
            session.flush()
            log_event(session, "matrix_version_saved", actor=actor.name, name=name, studies=run.studies)
            session.expunge(version)
    except IntegrityError:
        raise InputError(f"a matrix version named {name!r} exists already (versions are never "
                         "overwritten: choose another name)") from None
    return version


def list_versions(engine: Engine | None = None, *, actor: Actor = CLI) -> pd.DataFrame:
    """One row per version ``actor`` may see: name, owner, date, studies, ratings, held-out
    agreement before / after."""
    with read_session(engine) as session:
        versions = [v for v in session.exec(select(MatrixVersion).order_by(MatrixVersion.id)) if may(actor, "view", v)]
    rows = []
    for v in versions:
        p = json.loads(v.provenance_json)
        rows.append({"name": v.name, "owner": v.owner or "", "created_at": v.created_at,
                     "studies": ", ".join(p["studies"]), "based_on": p["based_on"], "n_ratings": p["n_ratings"],
                     "agreement_before": p["held_out"]["before"]["agreement"],
                     "agreement_after": p["held_out"]["after"]["agreement"]})
    return pd.DataFrame(rows, columns=["name", "owner", "created_at", "studies", "based_on", "n_ratings",
                                       "agreement_before", "agreement_after"])


def version_row(name: str, engine: Engine | None = None, *, actor: Actor = CLI,
                action: str = "view") -> MatrixVersion:
    """The stored version ``name`` once ``actor`` may ``action`` it; one the actor may not see is
    refused as if it did not exist."""
    with read_session(engine) as session:
        v = session.exec(select(MatrixVersion).where(MatrixVersion.name == name)).first()
    if v is None or not may(actor, "view", v):
        raise InputError(f"no matrix version named {name!r} (see `python -m studyapp matrices list`)")
    require(actor, action, v)
    return v


def load_version(name: str, engine: Engine | None = None, *, actor: Actor = CLI,
                 action: str = "view") -> tuple[SimilarityMatrix, SimilarityMatrix, dict]:
    """(verb matrix, object matrix, provenance) of a saved version ``actor`` may ``action``."""
    v = version_row(name, engine, actor=actor, action=action)
    return (_matrix_from_text(v.verb_npz, "verb"), _matrix_from_text(v.object_npz, "object"),
            {"name": v.name, "created_at": v.created_at.isoformat(), **json.loads(v.provenance_json)})


def export_version(name: str, out_dir: str | Path, engine: Engine | None = None, *,
                   actor: Actor = CLI) -> list[Path]:
    """Write ``verb.csv``, ``verb.npz``, ``object.csv``, ``object.npz`` and ``provenance.json``."""
    verb, obj, provenance = load_version(name, engine, actor=actor, action="download")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    files = [m.save(out / f"{role}{suffix}") for role, m in (("verb", verb), ("object", obj))
             for suffix in (".csv", ".npz")]
    files.append(write_text_atomic(out / "provenance.json", json.dumps(provenance, indent=2) + "\n"))
    return files
