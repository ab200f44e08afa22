"""Adaptive collection (spec ``[adaptive]``): ratings go where the rater model is least sure.

After each rating of a main item the item's standard error (``item.model_se``) is recomputed
with the study's fitted rater parameters (``study.rater_model``); every ``refit_every`` new
ratings the model (``metrics.rater_model``) is refitted on all main ratings and every item's
SE rewritten. An item's SE stays None (not known: the item stays open) while fewer than
``min_raters`` of its ratings count in the model, e.g. when the others came from raters flagged
as careless. The assignment (``studyapp.assignment``) then hands out items below
``min_raters`` first, then those whose SE lies furthest above ``target_se``, never beyond
``max_raters`` (the claim slots, as ``raters_per_item``), and none that has retired (SE at
target with at least ``min_raters`` claims). The model is fitted outside any transaction and
written in short ones; two refits racing both write a valid fit.
"""

from __future__ import annotations

import json

import pandas as pd
from sqlalchemy import func, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from metrics.rater_model import RaterModel, fit_rater_model

from .models import CANT_JUDGE, Annotator, Assignment, Item, Rating, Study
from .storage import log_event, read_session, write_session
from .study_spec import StudySpec


def main_ratings(session: Session, study_id: int, item_id: int | None = None) -> pd.DataFrame:
    """The current answers to main items (``item_id, annotator, rating``), "can't judge" left out."""
    latest = (select(Rating.assignment_id, func.max(Rating.revision).label("revision"))
              .where(Rating.study_id == study_id).group_by(Rating.assignment_id).subquery())
    query = (select(Item.item_key, Annotator.pseudonym, Rating.response)
             .join(latest, (latest.c.assignment_id == Rating.assignment_id)
                   & (latest.c.revision == Rating.revision))
             .join(Assignment, Assignment.id == Rating.assignment_id)
             .join(Item, Item.id == Rating.item_id)
             .join(Annotator, Annotator.id == Rating.annotator_id)
             .where(Rating.study_id == study_id, Assignment.phase == "main",
                    Rating.response != CANT_JUDGE))
    if item_id is not None:
        query = query.where(Rating.item_id == item_id)
    rows = session.exec(query).all()
    return pd.DataFrame({"item_id": [r[0] for r in rows], "annotator": [r[1] for r in rows],
                         "rating": [float(r[2]) for r in rows]})


def after_rating(study: Study, spec: StudySpec, item_id: int, engine: Engine | None = None) -> None:
    """Bring the SEs up to date after a rating of ``item_id``: the item's alone with the stored
    rater parameters, or every item's after a refit when ``refit_every`` ratings have come in."""
    settings = spec.adaptive
    with read_session(engine) as session:
        stored = session.exec(select(Study.rater_model).where(Study.id == study.id)).one()
        n_ratings = session.exec(select(func.count(Assignment.id)).where(
            Assignment.study_id == study.id, Assignment.phase == "main",
            Assignment.answered_at.is_not(None))).one()
        params = json.loads(stored) if stored else None
        if params is not None and n_ratings - params["n_ratings"] < settings["refit_every"]:
            ratings = main_ratings(session, study.id, item_id)
        else:
            ratings, params = main_ratings(session, study.id), None
    if ratings.empty:
        return
    if params is not None:
        scored = RaterModel.from_parameters(params).item_posterior(ratings)
        with write_session(engine) as session:
            session.exec(update(Item).where(Item.id == item_id).values(
                model_se=_usable_se(scored.iloc[0], settings)))
        return
    refit(study, spec, ratings, n_ratings, engine)


def refit(study: Study, spec: StudySpec, ratings: pd.DataFrame, n_ratings: int,
          engine: Engine | None = None) -> RaterModel:
    """Fit the rater model to the study's main ratings; store it and every rated item's SE."""
    model = fit_rater_model(ratings, scale=spec.scale.values)
    stored = json.dumps({**model.parameters(), "n_ratings": int(n_ratings)})
    with write_session(engine) as session:
        ids = dict(session.exec(select(Item.item_key, Item.id).where(Item.study_id == study.id,
                                                                     Item.role == "main")).all())
        for key, row in model.items.iterrows():
            session.exec(update(Item).where(Item.id == ids[key]).values(
                model_se=_usable_se(row, spec.adaptive)))
        session.exec(update(Study).where(Study.id == study.id).values(rater_model=stored))
        log_event(session, "rater_model_fitted", study.id, ratings=int(n_ratings),
                  mean_se=round(float(model.items["se"].mean()), 4))
    return model


def _usable_se(scored: pd.Series, settings: dict) -> float | None:
    """The item's SE, or None (not known: the item stays open) while fewer than ``min_raters``
    of its ratings count in the model (e.g. the others came from raters flagged as careless)."""
    return float(scored["se"]) if scored["n"] >= settings["min_raters"] else None


def adaptive_progress(study: Study, spec: StudySpec, engine: Engine | None = None) -> dict:
    """Items retired (SE at target with ``min_raters`` claims), main ratings so far, the ratings
    saved so far (``max_raters`` minus the claims of each retired item), the mean SE of the rated
    items, and the ratings a fixed design with ``max_raters`` per item would take."""
    settings = spec.adaptive
    with read_session(engine) as session:
        rows = session.exec(select(Item.n_claims, Item.model_se).where(
            Item.study_id == study.id, Item.role == "main")).all()
        n_ratings = session.exec(select(func.count(Assignment.id)).where(
            Assignment.study_id == study.id, Assignment.phase == "main",
            Assignment.answered_at.is_not(None))).one()
    retired = [claims for claims, se in rows if claims >= settings["min_raters"]
               and se is not None and se <= settings["target_se"]]
    rated = [se for _, se in rows if se is not None]
    return {"items": len(rows), "retired": len(retired), "ratings": int(n_ratings),
            "ratings_saved": sum(max(settings["max_raters"] - claims, 0) for claims in retired),
            "mean_se": sum(rated) / len(rated) if rated else None,
            "fixed_design_ratings": len(rows) * settings["max_raters"]}
