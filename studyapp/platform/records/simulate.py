"""Fill a study with simulated annotators (``python -m studyapp simulate``).

Each simulated annotator joins through an ordinary invite (``source`` ``simulated``: analyses leave
them out unless asked, ratings.csv's ``rater_kind`` says so), accepts the instructions and rates
the items the assignment gives them, exactly as a person would, until none is left. A rating
is the item's latent score on 0–4 (the study type's ``simulated_scores``, e.g. an HOI pair's
similarity) through the annotator's bias (strict, lenient, mid-scale, neutral) plus noise
(``metrics.study._simulation``). Used for pilots (how many items and raters a target interval width
needs) and for end-to-end tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sqlalchemy.engine import Engine

from metrics import InputError
from metrics.study import PROFILES, rater_profiles, simulate_ratings

from ...core.storage import get_engine, read_session
from ...studytypes import get_type
from .. import assignment
from ..specs.spec_model import spec_of
from . import studies
from .exports import SIMULATED


@dataclass(frozen=True)
class SimulationResult:
    study: str
    annotators: list[str]
    ratings: int


def simulate_study(slug: str, k: int = 5, noise: float = 0.6, seed: int = 0,
                   profiles: list[str] | None = None, engine: Engine | None = None,
                   progress=None) -> SimulationResult:
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
    items = studies.study_items(study.id, engine)
    latent = np.array(get_type(study.study_type).simulated_scores([fields for _, _, fields in items]))
    if study.status != "open":
        raise InputError(f"study {slug!r} is {study.status}; open it to add ratings")
    keys = [key for key, _, _ in items]
    # one fixed draw per (annotator, item): what an annotator answers does not depend on the order
    drawn = simulate_ratings(keys, latent, k=k, noise=noise, seed=seed, profiles=profiles)
    values = sorted(spec_of(study).scale.values)
    answer = {(row.annotator, row.item_id): on_scale(int(row.rating), values) for row in drawn.itertuples()}
    labels = [f"sim-{profiles[i]}-{seed}-{i + 1}" for i in range(k)]
    with (engine or get_engine()).connect() as conn:
        conn.execution_options(sqlite_begin="IMMEDIATE")
        with conn.begin():  # the functions below join this transaction (passed as their engine)
            invites = studies.invite(study.id, 0, labels, conn, source=SIMULATED)
            total = 0
            for i, inv in enumerate(invites):
                annotator_id = assignment.resolve_token(inv.token, conn)
                assignment.accept_instructions(annotator_id, conn)
                while (task := assignment.next_item(annotator_id, conn)) is not None:
                    assignment.submit(annotator_id, task.assignment_id,
                                      answer[(f"sim{i + 1}", task.item_key)],
                                      seconds_spent=0.0, engine=conn)
                    total += 1
                if progress:
                    progress(i + 1, k, inv.pseudonym, total)
    return SimulationResult(slug, [inv.pseudonym for inv in invites], total)


def on_scale(rating: int, values: list) -> str:
    """A simulated 0–4 rating as the nearest value of the study's scale (0–4 itself for SHOE's
    scale; 0/4 → the ends of a two-point scale).

    >>> on_scale(3, [0, 1, 2, 3, 4]), on_scale(0, [0, 1]), on_scale(4, [0, 1]), on_scale(2, [1, 2, 3])
    ('3', '0', '1', '2')
    """
    return str(values[int(round(rating / 4 * (len(values) - 1)))])


__all__ = ["PROFILES", "SimulationResult", "on_scale", "simulate_study"]
