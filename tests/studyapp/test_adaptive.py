"""Adaptive collection (spec ``[adaptive]``) on SQLite and PostgreSQL: items retire at the target
SE, nobody exceeds max_raters, the neediest item comes first, and concurrent annotators keep
the caps. The refit runs in the background: the submit does not wait for it, requests during a
refit coalesce into one more, the SEs it stores are those of a fit on all ratings, and a
failure of the SE bookkeeping is logged, never raised by the submit."""

import json
import threading
from types import SimpleNamespace

import pandas as pd
import pytest
from sqlalchemy.exc import IntegrityError
from sqlmodel import select
from studyhelpers import (
    EASY,
    HARD_BASE,
    answer,
    make_annotators,
    rate_until_done,
    ratings_of,
    ratings_per_item,
    write_adaptive_spec,
)

from metrics import InputError
from metrics.study._rater_model import fit_rater_model
from studyapp.core import storage
from studyapp.core.models import Annotator, Assignment, Event, Item, Study
from studyapp.platform import assignment
from studyapp.platform.assignment import adaptive
from studyapp.platform.commands import cli
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies
from studyapp.platform.records.simulate import simulate_study
from studyapp.platform.specs.spec_model import spec_of

pytestmark = pytest.mark.usefixtures("db_backend")


@pytest.fixture(autouse=True)
def refits_done(db_backend):
    """No background refit outlives the test's database."""
    yield
    assert adaptive.wait_for_refits(timeout=60)


@pytest.fixture
def held_refits(monkeypatch):
    """Every refit of the test waits for ``release`` before fitting; ``started`` is set when one
    has begun, ``fits`` lists the number of ratings each was given."""
    held = SimpleNamespace(started=threading.Event(), release=threading.Event(), fits=[])

    def held_fit(ratings, **kwargs):
        held.fits.append(len(ratings))
        held.started.set()
        assert held.release.wait(60)
        return fit_rater_model(ratings, **kwargs)
    monkeypatch.setattr(adaptive, "fit_rater_model", held_fit)
    yield held
    held.release.set()


def events(kind: str) -> list[dict]:
    with storage.read_session() as session:
        return [json.loads(e.detail) for e in session.exec(select(Event).where(Event.kind == kind)
                                                           .order_by(Event.id))]


def stored_ses() -> dict:
    with storage.read_session() as session:
        return dict(session.exec(select(Item.item_key, Item.model_se)).all())


def rate_next(annotator_id: int, index: int = 0):
    """Rate the annotator's next item as annotator ``index`` would (no waiting for refits)."""
    task = assignment.next_item(annotator_id)
    return assignment.submit(annotator_id, task.assignment_id, answer(task.item_key, index), 1.0)


def test_items_retire_at_the_target_and_hard_items_get_up_to_max_raters(tmp_path):
    # in file order: the SEs after two annotators depend on the order they rated in (the last
    # ratings are scored with the fit stored before them, refit_every = 3); in 1 of 40 random
    # orders a hard item's SE was already below 0.4
    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path, extra='order = "fixed"\n')))
    annotators = make_annotators(study_id, 6)
    assert len(rate_until_done(annotators[0], 0)) == 12  # nobody has min_raters yet
    assert len(rate_until_done(annotators[1], 1)) == 12
    with storage.read_session() as session:
        se = dict(session.exec(select(Item.item_key, Item.model_se)).all())
    assert all(se[k] < 0.4 for k in EASY) and all(se[k] > 0.4 for k in HARD_BASE)
    assert se[assignment.next_item(annotators[2]).item_key] == max(se.values())  # the neediest
    for index, annotator_id in enumerate(annotators[2:], start=2):
        rate_until_done(annotator_id, index)
    counts = ratings_per_item()
    with storage.read_session() as session:
        se = dict(session.exec(select(Item.item_key, Item.model_se)).all())
    assert {k: counts[k] for k in EASY} == {k: 2 for k in EASY}  # retired at min_raters
    for key in HARD_BASE:  # rated until at target or at max_raters
        assert counts[key] > 2 and (counts[key] == 4 or se[key] <= 0.4), (key, counts[key], se[key])
    with storage.read_session() as session:
        study = session.get(Study, study_id)
        fitted = session.exec(select(Event).where(Event.kind == "rater_model_fitted")).all()
    assert fitted and study.rater_model
    progress = adaptive.adaptive_progress(study, spec_of(study))
    retired = sum(1 for k in se if se[k] <= 0.4)
    saved = sum(4 - counts[k] for k in se if se[k] <= 0.4)   # max_raters 4 minus each retired item's ratings
    assert progress == {"items": 12, "retired": retired, "ratings": sum(counts.values()), "ratings_saved": saved,
                        "mean_se": pytest.approx(sum(se.values()) / 12), "fixed_design_ratings": 48}
    assert retired >= 6 and sum(counts.values()) < 48
    # progress counts items done (retired, or hard items at max_raters), not ratings against 12 × 4
    shown = studies.progress(study_id)
    states = {row["item_id"]: row["state"] for row in shown["per_item"]}
    assert states == {k: "retired" if se[k] <= 0.4 else "at max_raters" if counts[k] == 4 else "open"
                      for k in se}
    assert shown["items_done"] == sum(state != "open" for state in states.values()) == 12
    assert (shown["ratings_done"], shown["ratings_needed"]) == (sum(counts.values()), 48)


def test_status_command_reports_items_done_for_an_adaptive_study(tmp_path, capsys):
    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path)))
    first, second = make_annotators(study_id, 2)
    rate_until_done(first, 0)
    rate_until_done(second, 1)
    counts, ses = ratings_per_item(), stored_ses()
    done = sum(1 for k in ses if counts[k] >= 2 and ses[k] <= 0.4)  # EASY items retire at 2 ratings
    with storage.read_session() as session:
        slug = session.get(Study, study_id).slug
    assert cli.main(["status", slug]) == 0
    first_line = capsys.readouterr().out.splitlines()[0]
    assert f"{done} of 12 items done" in first_line and "24 ratings (at most 48)" in first_line
    assert done >= len(EASY)


def test_max_raters_holds_under_12_concurrent_annotators(tmp_path):
    spec = write_adaptive_spec(tmp_path, adaptive_keys="target_se = 0.01\nmin_raters = 2\nmax_raters = 3\n"
                                                       "refit_every = 5\n")
    study_id = studies.create_study(load_spec(spec))
    annotators = make_annotators(study_id, 12)
    barrier = threading.Barrier(len(annotators))
    errors = []

    def work(index, annotator_id):
        try:
            barrier.wait()
            rate_until_done(annotator_id, index)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=pair) for pair in enumerate(annotators)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert set(ratings_per_item().values()) == {3}  # nothing retires at SE 0.01: all reach max
    with storage.read_session() as session:
        claims = session.exec(select(Assignment.item_id, Assignment.annotator_id)
                              .where(Assignment.phase == "main")).all()
    assert len(claims) == len(set(claims)) == 36


@pytest.mark.parametrize("extra,keys,message", [
    ("", "target_se = 0.3\nmin_raters = 2\n", "missing key 'adaptive.max_raters'"),
    ("", "target_se = 'low'\nmax_raters = 4\n", "key 'adaptive.target_se' must be a number"),
    ("", "target_se = 0\nmax_raters = 4\n", "key 'adaptive.target_se' must be a number > 0, got 0"),
    ("", "target_se = 0.3\nmin_raters = 3\nmax_raters = 2\n", "key 'adaptive.max_raters' must be a whole number ≥ 3, got 2"),
    ("", "target_se = 0.3\nmax_raters = 4\nsteps = 2\n", "unknown key 'adaptive.steps'"),
    ("raters_per_item = 3", "target_se = 0.3\nmax_raters = 4\n",
     "key 'raters_per_item' does not apply to an adaptive study"),
])
def test_bad_adaptive_spec_is_one_line_naming_the_key(tmp_path, extra, keys, message):
    spec = write_adaptive_spec(tmp_path, extra=extra, adaptive_keys=keys)
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert message in str(err.value) and str(err.value).startswith(str(spec))
    assert "\n" not in str(err.value)


def test_submit_returns_while_the_refit_runs_in_the_background(tmp_path, held_refits):
    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path)))
    (annotator_id,) = make_annotators(study_id, 1)
    rating = rate_next(annotator_id)                # the first rating: a fit is due
    assert held_refits.started.wait(30)             # ... and is being fitted, held
    assert [r.id for r in ratings_of(annotator_id)] == [rating.id]
    with storage.read_session() as session:
        assert session.get(Study, study_id).rater_model is None
    assert not adaptive.wait_for_refits(timeout=0.2) and events("rater_model_fitted") == []
    held_refits.release.set()
    assert adaptive.wait_for_refits(timeout=60)
    assert [e["ratings"] for e in events("rater_model_fitted")] == [1]


@pytest.mark.parametrize("meanwhile,refit_every,fits", [
    (8, 1, [1, 9]),   # the held refit, then one on all ratings
    (8, 3, [1, 9]),
    (2, 3, [1]),      # 3 ratings, 1 fitted: the next refit is not due yet
])
def test_ratings_during_a_refit_ask_for_one_more_refit_at_most(tmp_path, held_refits, meanwhile,
                                                               refit_every, fits):
    spec = write_adaptive_spec(tmp_path, adaptive_keys="target_se = 0.4\nmin_raters = 2\n"
                                                       f"max_raters = 4\nrefit_every = {refit_every}\n")
    study_id = studies.create_study(load_spec(spec))
    (annotator_id,) = make_annotators(study_id, 1)
    rate_next(annotator_id)
    assert held_refits.started.wait(30)
    for _ in range(meanwhile):                      # each asks for a refit (none stored yet)
        rate_next(annotator_id)
    held_refits.release.set()
    assert adaptive.wait_for_refits(timeout=60)
    assert held_refits.fits == fits
    assert [e["ratings"] for e in events("rater_model_fitted")] == fits


def test_the_background_refit_stores_the_ses_of_a_fit_on_all_ratings(tmp_path):
    spec = write_adaptive_spec(tmp_path, adaptive_keys="target_se = 0.4\nmin_raters = 2\n"
                                                       "max_raters = 4\nrefit_every = 1\n")
    study_id = studies.create_study(load_spec(spec))
    given = []
    for index, annotator_id in enumerate(make_annotators(study_id, 3)):
        while (task := assignment.next_item(annotator_id)) is not None:   # refits run meanwhile
            assignment.submit(annotator_id, task.assignment_id, answer(task.item_key, index), 1.0)
            given.append((task.item_key, annotator_id, answer(task.item_key, index)))
    assert adaptive.wait_for_refits(timeout=60)
    background = stored_ses()
    with storage.read_session() as session:
        pseudonym = dict(session.exec(select(Annotator.id, Annotator.pseudonym)).all())
        study = session.get(Study, study_id)
    expected = fit_rater_model(pd.DataFrame({"item_id": [k for k, _, _ in given],
                                             "annotator": [pseudonym[a] for _, a, _ in given],
                                             "rating": [float(r) for _, _, r in given]}),
                               scale=(0, 1, 2, 3, 4)).items
    assert background == {key: pytest.approx(row.se, abs=1e-9) if row.n >= 2 else None
                          for key, row in expected.iterrows()}
    assert json.loads(study.rater_model)["n_ratings"] == len(given)
    adaptive.refit(study, spec_of(study))           # synchronously, on the same ratings
    assert stored_ses() == {key: pytest.approx(se, abs=1e-9) if se is not None else None
                            for key, se in background.items()}


def test_a_failing_refit_is_logged_and_the_submit_returns_the_stored_rating(tmp_path, monkeypatch):
    def broken_fit(ratings, **kwargs):
        raise RuntimeError("no convergence")
    monkeypatch.setattr(adaptive, "fit_rater_model", broken_fit)
    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path)))
    (annotator_id,) = make_annotators(study_id, 1)
    rating = rate_next(annotator_id)
    assert adaptive.wait_for_refits(timeout=60)
    assert [(r.id, r.response) for r in ratings_of(annotator_id)] == [(rating.id, rating.response)]
    assert events("rater_model_refit_failed") == [{"error": "RuntimeError: no convergence"}]
    monkeypatch.setattr(adaptive, "fit_rater_model", fit_rater_model)   # nothing is stuck:
    rate_next(annotator_id)                                              # the next rating refits
    assert adaptive.wait_for_refits(timeout=60)
    assert [e["ratings"] for e in events("rater_model_fitted")] == [2]


def test_a_failing_se_update_is_logged_neither_raised_nor_retried(tmp_path, monkeypatch):
    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path)))
    (annotator_id,) = make_annotators(study_id, 1)
    rate_next(annotator_id)
    assert adaptive.wait_for_refits(timeout=60)     # a stored fit: the next rating rescores its item

    def broken(self, ratings):
        raise IntegrityError("UPDATE item", {}, Exception("simulated"))
    monkeypatch.setattr(adaptive.RaterModel, "item_posterior", broken)
    rating = rate_next(annotator_id)
    assert ratings_of(annotator_id)[-1].id == rating.id and len(ratings_of(annotator_id)) == 2
    assert [e["error"].split(":")[0] for e in events("rater_model_update_failed")] == ["IntegrityError"]


def test_an_se_computed_with_replaced_rater_parameters_is_not_written(tmp_path, monkeypatch):
    spec = write_adaptive_spec(tmp_path, adaptive_keys="target_se = 0.01\nmin_raters = 2\n"
                                                       "max_raters = 4\nrefit_every = 100\n")
    study_id = studies.create_study(load_spec(spec))
    first, second = make_annotators(study_id, 2)
    rate_until_done(first, 0)                       # one fit, on the first rating
    with storage.read_session() as session:
        study = session.get(Study, study_id)
    posterior, computed, refitted = adaptive.RaterModel.item_posterior, [], []

    def refitted_meanwhile(self, ratings):          # another process stores a new fit meanwhile
        computed.append(posterior(self, ratings).iloc[0]["se"])
        refitted.append(adaptive.refit(study, spec_of(study)))
        return posterior(self, ratings)
    monkeypatch.setattr(adaptive.RaterModel, "item_posterior", refitted_meanwhile)
    task = assignment.next_item(second)
    assignment.submit(second, task.assignment_id, answer(task.item_key, 1), 1.0)
    stored = stored_ses()[task.item_key]
    assert stored == pytest.approx(refitted[0].items.loc[task.item_key, "se"], abs=1e-12)
    assert stored != pytest.approx(computed[0], abs=1e-6)   # the stale value was not written


def test_a_fit_of_fewer_ratings_never_replaces_a_newer_one(tmp_path, monkeypatch):
    # A slow fit (a background refit) reads the ratings; meanwhile two more ratings come in and a
    # fit of all of them is stored (a routing check's refit). The slow fit then finishes: the
    # stored fit stays the one of more ratings, or a rater it judged would be judged on less.
    spec = write_adaptive_spec(tmp_path, adaptive_keys="target_se = 0.01\nmin_raters = 2\n"
                                                       "max_raters = 4\nrefit_every = 100\n")
    study_id = studies.create_study(load_spec(spec))
    first, second = make_annotators(study_id, 2)
    rate_until_done(first, 0)
    with storage.read_session() as session:
        study = session.get(Study, study_id)
        second_name = session.get(Annotator, second).pseudonym
    calls = []

    def newer_fit_stored_meanwhile(ratings, **kwargs):
        calls.append(len(ratings))
        if len(calls) == 1:
            for _ in range(2):
                task = assignment.next_item(second)
                assignment.submit(second, task.assignment_id, answer(task.item_key, 1), 1.0)
            adaptive.refit(study, spec_of(study))
        return fit_rater_model(ratings, **kwargs)
    monkeypatch.setattr(adaptive, "fit_rater_model", newer_fit_stored_meanwhile)
    adaptive.refit(study, spec_of(study))
    with storage.read_session() as session:
        stored = json.loads(session.get(Study, study_id).rater_model)
    assert calls == [calls[0], calls[0] + 2]
    assert stored["n_ratings"] == calls[0] + 2 and stored["rater_ratings"][second_name] == 2


def test_simulate_refits_inline_in_its_transaction(tmp_path):
    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path)))   # refit_every 3
    result = simulate_study("a", k=3)
    assert adaptive.wait_for_refits(timeout=0)      # nothing was left to the background
    with storage.read_session() as session:
        fitted = json.loads(session.get(Study, study_id).rater_model)["n_ratings"]
    assert result.ratings - 3 < fitted <= result.ratings


def test_the_sql_priority_rule_and_item_state_agree(tmp_path):
    """The collection rule is written twice: as SQL in assignment.free_slot (which items may be
    handed out, in which order) and in Python in adaptive.item_state (how the dashboard counts
    them). On 40 random states of a 12-item study they agree: the item handed out is 'open', none
    is handed out when no item is open, and no open item comes before it by the rule (below
    min_raters first, then the largest SE, unknown SE first, then the fewest claims)."""
    import random

    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path)))
    (annotator_id,) = make_annotators(study_id, 1)
    rng = random.Random(0)
    with storage.read_session() as session:
        study = session.get(Study, study_id)
        spec = spec_of(study)
        annotator = session.get(Annotator, annotator_id)
    settings = spec.adaptive

    def key(claims, se):
        return (0 if claims < settings["min_raters"] else 1, -(1e9 if se is None else se), claims)

    for _ in range(40):
        with storage.write_session() as session:
            items = list(session.exec(select(Item).where(Item.study_id == study_id, Item.role == "main")))
            for item in items:
                item.n_claims = rng.randint(0, settings["max_raters"])
                item.model_se = rng.choice([None, round(rng.uniform(0.1, 0.8), 2)])
                session.add(item)
        with storage.read_session() as session:
            items = {i.id: (i.n_claims, i.model_se)
                     for i in session.exec(select(Item).where(Item.study_id == study_id, Item.role == "main"))}
            chosen = assignment.free_slot(session, annotator, study, spec)
        open_items = {i: state for i, state in items.items() if adaptive.item_state(*state, settings) == "open"}
        if not open_items:
            assert chosen is None
            continue
        assert chosen is not None and chosen[0] in open_items
        assert key(*items[chosen[0]]) == min(key(*state) for state in open_items.values())
