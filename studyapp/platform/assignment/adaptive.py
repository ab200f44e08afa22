"""Adaptive collection (spec ``[adaptive]``): ratings go where the rater model is least sure.

After each rating of a main item the item's standard error (``item.model_se``) is recomputed
at once with the study's fitted rater parameters (``study.rater_model``); once ``refit_every``
ratings have come in since the last fit, the model (``metrics.study._rater_model``) is refitted on all
main ratings and every item's SE rewritten. An item's SE stays None (not known: the item stays
open) while fewer than ``min_raters`` of its ratings count in the model, e.g. when the others
came from raters flagged as careless. The assignment (``studyapp.platform.assignment``) then hands out
items below ``min_raters`` first, then those whose SE lies furthest above ``target_se``, never
beyond ``max_raters`` (the claim slots, as ``raters_per_item``), and none that has retired (SE
at target with at least ``min_raters`` claims).

The refit (its time grows with the ratings) runs off the annotator's request, on one background
thread per process, and reads the ratings as they are when it starts. Requests coalesce per
study: one for a study whose refit is queued is already covered; one for a study whose refit is
running makes it run once more afterwards (if a refit is still due then), so there is never a
backlog. :func:`wait_for_refits` waits for them (tests, benchmarks). With a connection passed
in as the engine (one open transaction, as ``studyapp.platform.records.simulate`` uses) everything runs inline
instead. None of this can fail a submit once the rating is committed: an error is logged as an
event (``rater_model_update_failed``, ``rater_model_refit_failed``). The model is fitted outside
any transaction and written in short ones; a fit is stored only if no fit of more ratings was
stored while it ran (a slow background fit never replaces the one a routing check just made),
and an item's SE is rewritten with the rater parameters it was computed from only while
they are still the stored ones.
"""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
from sqlalchemy import func, or_, update
from sqlalchemy.engine import Connection, Engine
from sqlmodel import Session, select

from metrics.study import RaterModel, fit_rater_model

from ...core.models import CANT_JUDGE, Annotator, Assignment, Item, Rating, Study
from ...core.storage import get_engine, log_event, read_session, write_session
from ..specs.spec_model import StudySpec

LOG = logging.getLogger("studyapp.platform.assignment.adaptive")
_refit_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rater-model-refit")
_refit_lock = threading.Condition()            # guards _refit_state; notified when it empties
_refit_state: dict[tuple[str, int], str] = {}  # (database, study id) -> "queued" | "running" | "again"


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


def _answered_main(session: Session, study_id: int) -> int:
    """How many main assignments of the study have been answered (what ``refit_every`` counts)."""
    return session.exec(select(func.count(Assignment.id)).where(
        Assignment.study_id == study_id, Assignment.phase == "main",
        Assignment.answered_at.is_not(None))).one()


def after_rating(study: Study, spec: StudySpec, item_id: int, engine: Engine | None = None, *,
                 annotator_id: int | None = None) -> None:
    """Bring the SEs up to date after a committed rating of ``item_id``: the item's now, every
    item's by a background refit when one is due. With spec ``[routing]``, the rating that
    brings ``annotator_id`` to ``min_ratings`` main ratings refits here, before the submit
    returns, when the stored fit has not judged them yet (:func:`judged_by_fit`): their next
    item request then sees the fit, so a rater under the threshold gets no further item. Never
    raises: an error is logged as a ``rater_model_update_failed`` event. With a connection
    passed in (its transaction holds the rating), the refit runs inline and errors reach the
    caller."""
    if isinstance(engine, Connection):
        if _update_item_se(study, spec, item_id, engine):
            refit(study, spec, engine)
        return
    try:
        engine = engine or get_engine()
        due = _update_item_se(study, spec, item_id, engine)
        if spec.routing and annotator_id is not None and _reaches_routing_check(study, spec, annotator_id, engine):
            refit(study, spec, engine)
        elif due:
            _request_refit(study, spec, engine)
    except Exception as error:
        _log_failure("rater_model_update_failed", study.id, error, engine)


def _reaches_routing_check(study: Study, spec: StudySpec, annotator_id: int, engine: Engine) -> bool:
    """Whether this rating is the annotator's ``min_ratings``-th main one and the stored fit has
    not judged them yet (once per rater: one refit each, in the submit, not the next-item call)."""
    with read_session(engine) as session:
        answered = session.exec(select(func.count(Assignment.id)).where(
            Assignment.annotator_id == annotator_id, Assignment.phase == "main",
            Assignment.answered_at.is_not(None))).one()
        if answered != spec.routing["min_ratings"]:
            return False
        stored = session.exec(select(Study.rater_model).where(Study.id == study.id)).one()
        pseudonym = session.get(Annotator, annotator_id).pseudonym
    return stored is None or not judged_by_fit(json.loads(stored), pseudonym, answered)


def judged_by_fit(parameters: dict, rater: str, n_ratings: int) -> bool:
    """Whether a stored fit saw ``rater`` with at least ``n_ratings`` main ratings (its
    ``rater_ratings``; a fit stored without them counts a rater it has parameters for).

    >>> judged_by_fit({"discrimination": {"a": 1.0}, "rater_ratings": {"a": 7}}, "a", 8)
    False
    >>> judged_by_fit({"discrimination": {"a": 1.0}, "excluded": []}, "a", 8)
    True
    """
    if "rater_ratings" in parameters:
        return parameters["rater_ratings"].get(rater, 0) >= n_ratings
    return rater in parameters["discrimination"] or rater in parameters.get("excluded", ())


def _stored_fit(session: Session, study: Study, spec: StudySpec) -> tuple[str | None, bool]:
    """The stored fit (JSON; None before the first) and whether a refit is due: no fit yet, or
    ``refit_every`` main ratings answered since the one stored."""
    stored = session.exec(select(Study.rater_model).where(Study.id == study.id)).one()
    due = stored is None or (_answered_main(session, study.id) - json.loads(stored)["n_ratings"]
                             >= spec.adaptive["refit_every"])
    return stored, due


def _update_item_se(study: Study, spec: StudySpec, item_id: int, engine: Engine) -> bool:
    """Rescore ``item_id`` with the stored rater parameters, unless another fit replaced them
    meanwhile; True when a refit is due."""
    with read_session(engine) as session:
        stored, due = _stored_fit(session, study, spec)
        ratings = main_ratings(session, study.id, item_id) if stored else None
    if stored is not None and not ratings.empty:
        scored = RaterModel.from_parameters(json.loads(stored)).item_posterior(ratings)
        still_stored = select(Study.rater_model).where(Study.id == study.id).scalar_subquery() == stored
        with write_session(engine) as session:
            session.exec(update(Item).where(Item.id == item_id, still_stored).values(
                model_se=_usable_se(scored.iloc[0], spec.adaptive)))
    return due


def _request_refit(study: Study, spec: StudySpec, engine: Engine) -> None:
    """Have this process's background thread refit the study's model (coalesced, see above)."""
    key = (str(engine.url), study.id)
    with _refit_lock:
        state = _refit_state.get(key)
        if state is None:
            _refit_worker.submit(_refit_until_current, study, spec, engine, key)
            _refit_state[key] = "queued"
        elif state == "running":
            _refit_state[key] = "again"


def _refit_until_current(study: Study, spec: StudySpec, engine: Engine, key: tuple[str, int]) -> None:
    """The background task: refit, and once more if a request came in meanwhile; each time only
    while a refit is still due (the ratings, or another process's fit, may have caught up)."""
    again = True
    while again:
        with _refit_lock:
            _refit_state[key] = "running"
        try:
            with read_session(engine) as session:
                due = _stored_fit(session, study, spec)[1]
            if due:
                refit(study, spec, engine)
        except Exception as error:
            _log_failure("rater_model_refit_failed", study.id, error, engine)
        finally:
            with _refit_lock:
                again = _refit_state[key] == "again"
                if not again:
                    del _refit_state[key]
                    _refit_lock.notify_all()


def wait_for_refits(timeout: float | None = None) -> bool:
    """Wait until this process has no refit queued or running; False if ``timeout`` seconds
    passed first."""
    with _refit_lock:
        return _refit_lock.wait_for(lambda: not _refit_state, timeout)


def _log_failure(kind: str, study_id: int, error: Exception, engine: Engine | None) -> None:
    """Record a failed SE update in the server log and as an event."""
    message = f"{type(error).__name__}: {error}"
    LOG.error("%s (study %s): %s", kind, study_id, message, exc_info=error)
    try:
        with write_session(engine) as session:
            log_event(session, kind, study_id, error=message)
    except Exception:
        LOG.exception("could not record %s for study %s", kind, study_id)


def refit(study: Study, spec: StudySpec, engine: Engine | None = None) -> RaterModel | None:
    """Fit the rater model to the study's main ratings as they are now; store it and every rated
    item's SE unless a fit of more ratings was stored while this one ran. None when there is
    nothing to fit yet."""
    with read_session(engine) as session:
        n_ratings = _answered_main(session, study.id)
        ratings = main_ratings(session, study.id)
        ids = dict(session.exec(select(Item.item_key, Item.id).where(Item.study_id == study.id,
                                                                     Item.role == "main")).all())
    if ratings.empty:
        return None
    model = fit_rater_model(ratings, scale=spec.scale.values)
    stored = json.dumps({**model.parameters(), "n_ratings": int(n_ratings),
                         "rater_ratings": {str(k): int(v) for k, v in ratings["annotator"].value_counts().items()}})
    ses = [{"id": ids[key], "model_se": _usable_se(row, spec.adaptive)}
           for key, row in model.items.iterrows()]
    with write_session(engine) as session:   # short: the annotators' submits wait for it
        current = session.exec(select(Study.rater_model).where(Study.id == study.id)
                                  .with_for_update(key_share=True)).one()   # FOR NO KEY UPDATE
        if current is not None and json.loads(current)["n_ratings"] > n_ratings:
            return model                      # a fit of more ratings was stored meanwhile: keep it
        session.exec(update(Item), params=ses)  # one executemany, by primary key
        session.exec(update(Study).where(Study.id == study.id).values(rater_model=stored))
        log_event(session, "rater_model_fitted", study.id, ratings=int(n_ratings),
                  mean_se=round(float(model.items["se"].mean()), 4))
    return model


def _usable_se(scored: pd.Series, settings: dict) -> float | None:
    """The item's SE, or None (not known: the item stays open) while fewer than ``min_raters``
    of its ratings count in the model (e.g. the others came from raters flagged as careless)."""
    return float(scored["se"]) if scored["n"] >= settings["min_raters"] else None


def item_state(n_claims: int, model_se: float | None, settings: dict) -> str:
    """``retired`` (``min_raters`` claims and SE at or below ``target_se``), ``at max_raters``
    (every slot claimed, SE still above the target) or ``open``.

    >>> settings = {"min_raters": 2, "max_raters": 4, "target_se": 0.3}
    >>> [item_state(n, se, settings) for n, se in [(2, 0.2), (1, 0.2), (4, 0.5), (3, None)]]
    ['retired', 'open', 'at max_raters', 'open']
    """
    if n_claims >= settings["min_raters"] and model_se is not None and model_se <= settings["target_se"]:
        return "retired"
    return "at max_raters" if n_claims >= settings["max_raters"] else "open"


def adaptive_progress(study: Study, spec: StudySpec, engine: Engine | None = None) -> dict:
    """Items retired (SE at target with ``min_raters`` claims; with ``[active]`` of the drawn
    items), main ratings so far, the ratings
    saved so far (``max_raters`` minus the claims of each retired item), the mean SE of the rated
    items, and the ratings a fixed design with ``max_raters`` per item would take."""
    settings = spec.adaptive
    with read_session(engine) as session:
        rows = session.exec(select(Item.n_claims, Item.model_se).where(   # [active]: drawn items
            Item.study_id == study.id, Item.role == "main",
            or_(Item.active_priority.is_(None), Item.active_priority > 0))).all()
        n_ratings = _answered_main(session, study.id)
    retired = [claims for claims, se in rows if item_state(claims, se, settings) == "retired"]
    rated = [se for _, se in rows if se is not None]
    return {"items": len(rows), "retired": len(retired), "ratings": int(n_ratings),
            "ratings_saved": sum(max(settings["max_raters"] - claims, 0) for claims in retired),
            "mean_se": sum(rated) / len(rated) if rated else None,
            "fixed_design_ratings": len(rows) * settings["max_raters"]}


def routed_consistency(parameters: dict, rater: str, n_ratings: int, settings: dict) -> float | None:
    """The rater's fitted consistency when spec ``[routing]`` routes them out, else None: they
    gave at least ``min_ratings`` main ratings and the stored fit (``Study.rater_model``) puts
    their consistency — discrimination over the median rater's, as
    ``metrics.study.fit_rater_model`` reports it; 0 for a rater the fit left out as
    careless — below ``min_consistency``. A rater the fit has not seen yet is not routed.

    >>> fit = {"discrimination": {"a": 2.0, "b": 1.0, "c": 0.5}, "excluded": ["d"]}
    >>> settings = {"min_ratings": 10, "min_consistency": 0.6}
    >>> [routed_consistency(fit, r, n, settings)
    ...  for r, n in [("c", 10), ("c", 9), ("b", 12), ("d", 10), ("e", 10)]]
    [0.5, None, None, 0.0, None]
    """
    if n_ratings < settings["min_ratings"]:
        return None
    if rater in parameters.get("excluded", ()):
        consistency = 0.0
    elif rater in parameters["discrimination"]:
        discrimination = pd.Series(parameters["discrimination"], dtype=float)
        consistency = float(discrimination[rater] / discrimination.median())
    else:
        return None
    return consistency if consistency < settings["min_consistency"] else None
