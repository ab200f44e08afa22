"""Fill a study with simulated annotators (``python -m studyapp simulate``).

Each simulated annotator joins through an ordinary invite, accepts the instructions and rates
the items the assignment gives them, exactly as a person would, until none is left. A rating
is the item's latent similarity on 0–4 through the annotator's bias (strict, lenient,
mid-scale, neutral) plus noise (``metrics.simulation``). The latent similarity of an HOI pair is
``4 · (w·v + (1 − w)·o)``, with v and o from the item's ``verb_sim`` / ``object_sim`` when it has
them and from the similarity matrices otherwise. Used for pilots (how many items and raters a
target interval width needs) and for end-to-end tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sqlalchemy.engine import Engine

from metrics import InputError, SimilarityMatrix, combine
from metrics.baseline import load_default
from metrics.simulation import PROFILES, rater_profiles, simulate_ratings

from . import assignment, studies
from .storage import get_engine, read_session

SIMULATED_TYPES = ("hoi_similarity",)


@dataclass(frozen=True)
class SimulationResult:
    study: str
    annotators: list[str]
    ratings: int


def latent_similarity(fields: dict, verb_matrix: SimilarityMatrix, object_matrix: SimilarityMatrix,
                      w: float = 0.5) -> float:
    """The true similarity (0–4) of an HOI pair item, as the simulated raters see it."""
    v = fields.get("verb_sim")
    o = fields.get("object_sim")
    if v is None:
        v = verb_matrix.sim(fields["pred_verb"], fields["gt_verb"])
    if o is None:
        o = object_matrix.sim(fields["pred_object"], fields["gt_object"])
    return float(4.0 * combine(v, o, "arithmetic", w))


def simulate_study(slug: str, k: int = 5, noise: float = 0.6, seed: int = 0,
                   profiles: list[str] | None = None, verb_matrix: SimilarityMatrix | None = None,
                   object_matrix: SimilarityMatrix | None = None, w: float = 0.5,
                   engine: Engine | None = None, progress=None) -> SimulationResult:
    """Add k simulated annotators to a study and let each rate until no item is left for them.
    All or nothing: the annotators, their assignments, ratings and events are one transaction."""
    if k < 1:
        raise InputError("simulate at least one annotator")
    if not (math.isfinite(noise) and noise >= 0):
        raise InputError(f"noise must be a finite number >= 0, got {noise}")
    profiles = profiles or rater_profiles(k)
    unknown = [p for p in profiles if p not in PROFILES]
    if len(profiles) != k or unknown:
        raise InputError(f"profiles must name {k} of {', '.join(PROFILES)}"
                         + (f"; unknown {unknown[0]!r}" if unknown else f", got {len(profiles)}"))
    with read_session(engine) as session:
        study = studies.study_by_slug(session, slug)
    if study.study_type not in SIMULATED_TYPES:
        raise InputError(f"simulate supports {', '.join(SIMULATED_TYPES)} studies, not {study.study_type!r}")
    if study.status != "open":
        raise InputError(f"study {slug!r} is {study.status}; open it to add ratings")
    verb_matrix = verb_matrix or load_default("v")
    object_matrix = object_matrix or load_default("n")
    keys = [key for key, _, _ in studies.study_items(study.id, engine)]
    fields = {key: f for key, _, f in studies.study_items(study.id, engine)}
    latent = np.array([latent_similarity(fields[key], verb_matrix, object_matrix, w) for key in keys])
    # one fixed draw per (annotator, item): what an annotator answers does not depend on the order
    drawn = simulate_ratings(keys, latent, k=k, noise=noise, seed=seed, profiles=profiles)
    answer = {(row.annotator, row.item_id): int(row.rating) for row in drawn.itertuples()}
    labels = [f"sim-{profiles[i]}-{seed}-{i + 1}" for i in range(k)]
    with (engine or get_engine()).connect() as conn:
        conn.execution_options(sqlite_begin="IMMEDIATE")
        with conn.begin():  # the functions below join this transaction (passed as their engine)
            invites = studies.invite(study.id, 0, labels, conn)
            total = 0
            for i, inv in enumerate(invites):
                annotator_id = assignment.resolve_token(inv.token, conn)
                assignment.accept_instructions(annotator_id, conn)
                while (task := assignment.next_item(annotator_id, conn)) is not None:
                    assignment.submit(annotator_id, task.assignment_id,
                                      str(answer[(f"sim{i + 1}", task.item_key)]),
                                      seconds_spent=0.0, engine=conn)
                    total += 1
                if progress:
                    progress(i + 1, k, inv.pseudonym, total)
    return SimulationResult(slug, [inv.pseudonym for inv in invites], total)


__all__ = ["PROFILES", "SimulationResult", "latent_similarity", "simulate_study"]
