"""Storage: SQLite set-up, schema versions and upgrade, append-only ratings.

Every test runs on SQLite and on PostgreSQL (the ``db_backend`` fixture in conftest.py).
"""

import json
import threading

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.exc import IntegrityError
from sqlmodel import SQLModel, select
from studyhelpers import make_annotators, make_study, ratings_of

from studyapp.core import accounts, migrations, storage
from studyapp.core.accounts import Actor
from studyapp.core.models import Event, Rating, Study
from studyapp.platform import assignment

pytestmark = pytest.mark.usefixtures("db_backend")


def test_fresh_database_is_wal_with_foreign_keys_at_latest_version(db_backend):
    engine = storage.get_engine()
    assert engine.dialect.name == db_backend
    with engine.connect() as conn:
        if db_backend == "sqlite":
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        versions = [r[0] for r in conn.execute(text("SELECT version FROM schema_version ORDER BY version"))]
    assert versions == list(range(1, 12)) and migrations.LATEST == 11


def test_migrations_build_exactly_the_model_schema():
    insp = inspect(storage.get_engine())
    for table in SQLModel.metadata.sorted_tables:
        built = {c["name"] for c in insp.get_columns(table.name)}
        assert built == {c.name for c in table.columns}, table.name
        built_unique = {tuple(u["column_names"]) for u in insp.get_unique_constraints(table.name)}
        built_unique |= {tuple(i["column_names"]) for i in insp.get_indexes(table.name) if i["unique"]}
        for constraint in table.constraints:
            if constraint.__class__.__name__ == "UniqueConstraint":
                assert tuple(c.name for c in constraint.columns) in built_unique, (table.name, constraint)


def test_foreign_keys_are_enforced():
    engine = storage.get_engine()
    with pytest.raises(IntegrityError):
        with storage.write_session(engine) as session:
            session.add(Rating(study_id=99, assignment_id=12345, annotator_id=1, item_id=1,
                               revision=0, response="3", seconds_spent=1.0))


def test_upgrade_from_version_1_keeps_rows(fresh_db):
    url = fresh_db()
    old = create_engine(url)
    with old.begin() as conn:
        assert migrations.upgrade(conn, target=1) == [1]
        conn.execute(text("INSERT INTO study (id, slug, title, study_type, spec_json, status, "
                          "raters_per_item, created_at) VALUES (1, 'old', 'Old study', "
                          "'hoi_similarity', '{}', 'open', 3, '2025-01-02 03:04:05')"))
        conn.execute(text("INSERT INTO annotator (id, study_id, pseudonym, source, token_hash, "
                          "seed, created_at) VALUES (7, 1, 'ann', 'invite', 'abc', 42, "
                          "'2025-01-02 03:04:05')"))
        conn.execute(text("INSERT INTO item (id, study_id, item_key, role, position, fields_json) "
                          "VALUES (5, 1, 'i1', 'main', 0, '{}'), (6, 1, 'i2', 'main', 1, '{}')"))
        conn.execute(text("INSERT INTO assignment (id, study_id, annotator_id, item_id, phase, "
                          "position, slot, claimed_at) VALUES (9, 1, 7, 6, 'main', 0, 0, '2025-01-02')"))
        conn.execute(text("INSERT INTO rating (study_id, assignment_id, annotator_id, item_id, "
                          "revision, response, seconds_spent, created_at) VALUES "
                          "(1, 9, 7, 6, 0, '3', 4.5, '2025-01-02')"))
    old.dispose()
    with create_engine(url).connect() as conn:
        assert "prolific_pid" not in {c["name"] for c in inspect(conn).get_columns("annotator")}

    engine = storage.get_engine(url)  # opening the database upgrades it
    with engine.connect() as conn:
        assert migrations.current_version(conn) == 11
        # version 9 adds the LLM rating and active selection (empty) and the routing time (empty)
        assert conn.execute(text("SELECT llm_rating, active_probability, active_priority FROM item "
                                 "ORDER BY id")).all() == [(None, None, None)] * 2
        assert conn.execute(text("SELECT routed_at FROM annotator")).one() == (None,)
        # version 8 adds the Prolific status (empty) and the comprehension failures (0) of old annotators
        assert conn.execute(text("SELECT prolific_status, comprehension_failures FROM annotator")).one() == (None, 0)
        # version 7 adds the study owner and the event actor, empty for the old rows, and the accounts
        assert conn.execute(text("SELECT owner FROM study")).one() == (None,)
        assert conn.execute(text("SELECT COUNT(*) FROM researcher")).scalar() == 0
        # version 5 adds the rater model columns, empty for the old rows
        assert conn.execute(text("SELECT model_se FROM item ORDER BY id")).all() == [(None,), (None,)]
        assert conn.execute(text("SELECT rater_model FROM study")).one() == (None,)
        # version 4 adds the comment column, empty for the old rows
        assert conn.execute(text("SELECT response, seconds_spent, comment FROM rating")).one() == (
            "3", 4.5, None)
        # version 3 back-fills the claim counter from the assignments
        assert conn.execute(text("SELECT id, n_claims FROM item ORDER BY id")).all() == [(5, 0), (6, 1)]
        rows = conn.execute(text("SELECT id, pseudonym, seed, token_hash, prolific_pid FROM annotator")).all()
        assert [tuple(r) for r in rows] == [(7, "ann", 42, "abc", None)]
        assert conn.execute(text("SELECT slug, title FROM study")).one() == ("old", "Old study")
        conn.execute(text("INSERT INTO annotator (study_id, pseudonym, source, token_hash, seed, "
                          "created_at, prolific_pid) VALUES (1, 'p', 'prolific', 'def', 1, "
                          "'2025-01-02', 'PID1')"))
        with pytest.raises(IntegrityError):  # the version-2 unique index exists
            conn.execute(text("INSERT INTO annotator (study_id, pseudonym, source, token_hash, "
                              "seed, created_at, prolific_pid) VALUES (1, 'q', 'prolific', 'ghi', "
                              "1, '2025-01-02', 'PID1')"))


def test_upgrade_from_version_6_adds_accounts_and_keeps_rows(fresh_db):
    url = fresh_db()
    old = create_engine(url)
    with old.begin() as conn:
        assert migrations.upgrade(conn, target=6) == [1, 2, 3, 4, 5, 6]
        conn.execute(text("INSERT INTO study (id, slug, title, study_type, spec_json, status, "
                          "raters_per_item, created_at) VALUES (1, 'old', 'Old study', "
                          "'hoi_similarity', '{}', 'open', 3, '2025-01-02 03:04:05')"))
        conn.execute(text("INSERT INTO event (id, study_id, kind, detail, created_at) VALUES "
                          "(4, 1, 'study_created', '{\"slug\": \"old\"}', '2025-01-02 03:04:05')"))
        conn.execute(text("INSERT INTO matrix_version (id, name, created_at, provenance_json, verb_npz, "
                          "object_npz) VALUES (2, 'v1', '2025-01-03', '{}', 'VERB', 'OBJ')"))
    old.dispose()
    with create_engine(url).connect() as conn:
        assert not inspect(conn).has_table("researcher")
        assert "owner" not in {c["name"] for c in inspect(conn).get_columns("study")}

    engine = storage.get_engine(url)  # opening the database upgrades it
    with engine.connect() as conn:
        assert migrations.current_version(conn) == 11
        assert conn.execute(text("SELECT slug, status, owner FROM study")).one() == ("old", "open", None)
        assert conn.execute(text("SELECT id, kind, actor FROM event")).one() == (4, "study_created", None)
        assert conn.execute(text("SELECT name, verb_npz, object_npz FROM matrix_version")).one() == (
            "v1", "VERB", "OBJ")
        # version 10: a version of unknown studies stays the platform owner's, nothing is shared
        assert conn.execute(text("SELECT owner, shared_with FROM matrix_version")).one() == (None, None)
        assert conn.execute(text("SELECT COUNT(*) FROM researcher")).scalar() == 0
    with storage.read_session(engine) as session:
        study = session.get(Study, 1)
    # a study from before accounts has no owner: the platform owner and viewers see it, no researcher does
    assert accounts.may(accounts.FIRST_OWNER, "change", study)
    assert accounts.may(Actor("vera", "viewer"), "view", study)
    assert not accounts.may(Actor("vera", "viewer"), "change", study)
    assert not accounts.may(Actor("alice", "researcher"), "view", study)
    # the old event shows in the audit log with no actor
    with storage.read_session(engine) as session:
        assert [(e.kind, e.actor) for e in session.exec(select(Event))] == [("study_created", None)]


def test_upgrade_is_idempotent(fresh_db):
    url = fresh_db()
    storage.get_engine(url)
    storage.dispose_all()
    with storage.get_engine(url).begin() as conn:
        assert migrations.upgrade(conn) == []


def test_double_submit_of_the_same_answer_is_idempotent(tmp_path):
    study = make_study(tmp_path)
    (annotator,) = make_annotators(study, 1)
    task = assignment.next_item(annotator)
    first = assignment.submit(annotator, task.assignment_id, 3, 2.0)
    again = assignment.submit(annotator, task.assignment_id, "3", 2.5)
    assert again.id == first.id
    assert [(r.revision, r.response) for r in ratings_of(annotator)] == [(0, "3")]


def test_concurrent_double_submits_store_one_row(tmp_path):
    study = make_study(tmp_path)
    (annotator,) = make_annotators(study, 1)
    task = assignment.next_item(annotator)
    barrier = threading.Barrier(8)
    ids, errors = [], []

    def submit():
        barrier.wait()
        try:
            ids.append(assignment.submit(annotator, task.assignment_id, 1, 1.0).id)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(ids)) == 1 and len(ratings_of(annotator)) == 1


def test_changed_answer_supersedes_and_keeps_history(tmp_path):
    study = make_study(tmp_path)
    (annotator,) = make_annotators(study, 1)
    task = assignment.next_item(annotator)
    first = assignment.submit(annotator, task.assignment_id, 2, 4.0)
    second = assignment.submit(annotator, task.assignment_id, 4, 1.5, revise=True)
    third = assignment.submit(annotator, task.assignment_id, 2, 0.5, revise=True)
    rows = ratings_of(annotator)
    assert [(r.revision, r.response, r.supersedes_id) for r in rows] == [
        (0, "2", None), (1, "4", first.id), (2, "2", second.id)]
    assert rows[-1].id == third.id
    with storage.read_session() as session:
        revisions = session.exec(select(Event).where(Event.kind == "rating_revised")).all()
    assert len(revisions) == 2


def test_rating_is_durable_when_submit_returns(tmp_path):
    study = make_study(tmp_path)
    (annotator,) = make_annotators(study, 1)
    task = assignment.next_item(annotator)
    assignment.submit(annotator, task.assignment_id, 0, 3.25)
    storage.dispose_all()  # as after a server restart: a new engine, new connections
    rows = ratings_of(annotator)
    assert [(r.response, r.seconds_spent) for r in rows] == [("0", 3.25)]


def test_invalid_response_is_refused_and_nothing_stored(tmp_path):
    study = make_study(tmp_path)
    (annotator,) = make_annotators(study, 1)
    task = assignment.next_item(annotator)
    from metrics import InputError
    for bad in (5, -1, "x", 2.5):
        with pytest.raises(InputError):
            assignment.submit(annotator, task.assignment_id, bad, 1.0)
    assert ratings_of(annotator) == []


def test_upgrade_to_version_10_gives_old_versions_the_owner_of_their_studies(fresh_db):
    """A matrix version saved before owners existed belongs to the owner of the studies behind
    it when they have one owner; versions over studies of several owners stay the platform owner's."""
    url = fresh_db()
    old = create_engine(url)
    with old.begin() as conn:
        assert migrations.upgrade(conn, target=9) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
        for k, (slug, owner) in enumerate([("a1", "alice"), ("a2", "alice"), ("b1", "bob")], start=1):
            conn.execute(text("INSERT INTO study (id, slug, title, study_type, spec_json, status, raters_per_item, "
                              "created_at, owner) VALUES (:i, :s, 'x', 'hoi_similarity', '{}', 'open', 3, "
                              "'2025-01-02', :o)"), {"i": k, "s": slug, "o": owner})
        for k, studies in enumerate([["a1", "a2"], ["a1", "b1"]], start=1):
            conn.execute(text("INSERT INTO matrix_version (id, name, created_at, provenance_json, verb_npz, "
                              "object_npz) VALUES (:i, :n, '2025-01-03', :p, 'V', 'O')"),
                         {"i": k, "n": f"v{k}", "p": json.dumps({"studies": studies})})
    old.dispose()
    engine = storage.get_engine(url)
    with engine.connect() as conn:
        assert migrations.current_version(conn) == 11
        assert conn.execute(text("SELECT name, owner FROM matrix_version ORDER BY id")).all() == [
            ("v1", "alice"), ("v2", None)]
        assert conn.execute(text("SELECT shared_with FROM study")).all() == [(None,)] * 3
