"""A database that refuses writes (read-only, disk full) must never swallow an answer: the
annotator page says "your answer was not saved, please retry", keeps the item, and the retry
stores it once the database accepts writes again. The refusals are the databases' own:
SQLite's ``PRAGMA query_only`` and PostgreSQL's read-only transactions."""

import pytest
from sqlalchemy import event
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlmodel import select
from studyhelpers import make_annotators, make_study
from test_pages import notices, open_app, progress_text, rating_button, screen_components

from studyapp.core import storage
from studyapp.core.models import Rating
from studyapp.platform import assignment
from studyapp.platform.records import studies

pytestmark = pytest.mark.usefixtures("db_backend")


class ReadOnly:
    """Makes every connection the engine hands out refuse writes while ``on`` is true."""

    def __init__(self, engine):
        self.engine, self.on = engine, False
        event.listen(engine.pool, "checkout", self._checkout)
        engine.pool.dispose()  # connections opened before are not reused

    def _checkout(self, dbapi_conn, _record, _proxy):
        cursor = dbapi_conn.cursor()
        if self.engine.dialect.name == "sqlite":
            cursor.execute(f"PRAGMA query_only = {int(self.on)}")
        else:
            dbapi_conn.rollback()
            cursor.execute(f"SET SESSION CHARACTERISTICS AS TRANSACTION "
                           f"{'READ ONLY' if self.on else 'READ WRITE'}")
            dbapi_conn.commit()
        cursor.close()


def _stored():
    with storage.read_session() as session:
        return [(r.item_id, r.response) for r in session.exec(select(Rating).order_by(Rating.id))]


def test_the_database_refuses_writes_for_real(tmp_path):
    study = make_study(tmp_path, n_items=2, raters=1)
    (annotator,) = make_annotators(study, 1)
    task = assignment.next_item(annotator)
    guard = ReadOnly(storage.get_engine())
    guard.on = True
    with pytest.raises(SQLAlchemyError):
        assignment.submit(annotator, task.assignment_id, 2, 1.0)
    guard.on = False
    assert _stored() == []
    assignment.submit(annotator, task.assignment_id, 2, 1.0)
    assert [r for _i, r in _stored()] == ["2"]


def test_annotator_is_told_the_answer_was_not_saved_and_the_retry_stores_it(tmp_path, db_backend):
    study = make_study(tmp_path, n_items=3, raters=1, extra='order = "fixed"')
    (invite,) = studies.invite(study, 1)
    at = open_app(token=invite.token)
    at.button(key="start").click().run()
    assert progress_text(at) == "Item 1 of 3" and not at.error
    guard = ReadOnly(storage.get_engine())

    guard.on = True
    rating_button(at, 3).click().run()
    assert not at.exception
    said = [e.value.replace("\\", "") for e in at.error] + (  # a page of its own, or the screen's notice
        notices(at, "error") if screen_components(at) else [])
    assert "Your answer was not saved, please retry" in said[0]
    assert _stored() == []  # and nothing was half-written
    if db_backend == "sqlite":  # no write lock at all: the page offers a retry of the page
        assert [b.label for b in at.button if b.key == "retry"] == ["Retry"]
        guard.on = False
        at.button(key="retry").click().run()
    guard.on = False
    assert progress_text(at) == "Item 1 of 3"  # the same item is on screen
    rating_button(at, 3).click().run()
    assert not at.exception and not at.error
    assert progress_text(at) == "Item 2 of 3"
    assert [r for _i, r in _stored()] == ["3"]


def test_a_lost_connection_while_loading_the_next_item_offers_a_retry(tmp_path):
    study = make_study(tmp_path, n_items=2, raters=1)
    (invite,) = studies.invite(study, 1)
    at = open_app(token=invite.token)
    at.button(key="start").click().run()
    engine = storage.get_engine()
    state = {"fail": True}

    @event.listens_for(engine, "before_cursor_execute")
    def _fail(conn, cursor, statement, params, context, executemany):
        if state["fail"] and "assignment" in statement and statement.lstrip().upper().startswith("SELECT"):
            raise OperationalError(statement, params, Exception("server closed the connection"))

    at.run()
    assert not at.exception
    assert "could not load your next item" in at.error[0].value
    state["fail"] = False
    at.button(key="retry").click().run()
    assert not at.exception and progress_text(at) == "Item 1 of 2"
