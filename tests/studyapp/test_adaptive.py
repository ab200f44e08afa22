"""Adaptive collection (spec ``[adaptive]``) on SQLite and PostgreSQL: items retire at the target
SE, nobody exceeds max_raters, the neediest item comes first, and concurrent annotators keep
the caps."""

import threading

import pytest
from sqlmodel import select

from metrics import InputError
from studyapp import adaptive, assignment, storage, studies
from studyapp.models import Assignment, Event, Item, Study
from studyapp.specs import load_spec
from studyapp.study_spec import spec_of
from studyhelpers import EASY, HARD_BASE, make_annotators, rate_until_done, ratings_per_item, write_adaptive_spec

pytestmark = pytest.mark.usefixtures("db_backend")
def test_items_retire_at_the_target_and_hard_items_get_up_to_max_raters(tmp_path):
    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path)))
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
        except Exception as exc:  # noqa: BLE001 - reported below
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
    ("", "target_se = 0\nmax_raters = 4\n", "key 'adaptive.target_se' must be above 0.0"),
    ("", "target_se = 0.3\nmin_raters = 3\nmax_raters = 2\n", "key 'adaptive.max_raters' must be at least 3"),
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
