"""Access control: tokens, revocation, scoping, the console password and its sign-in backoff,
and XSRF protection of the served app."""

import base64
import hashlib
import tomllib
from datetime import UTC, datetime, timedelta

import pytest
from projectpaths import ROOT
from sqlalchemy import text
from sqlmodel import select
from streamlit.testing.v1 import AppTest
from studyhelpers import console_page, make_study

from metrics import InputError
from studyapp.core import auth, storage
from studyapp.core.models import Annotator, Event, Rating, Setting
from studyapp.platform import assignment
from studyapp.platform.commands import cli
from studyapp.platform.records import studies

APP = str(ROOT / "studyapp" / "views" / "app.py")


def open_app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def events(kind: str) -> list[Event]:
    with storage.read_session() as session:
        return list(session.exec(select(Event).where(Event.kind == kind).order_by(Event.id)))


def annotator_id(token: str) -> int:
    found = assignment.resolve_token(token)
    assert found is not None
    return found


# ------------------------------------------------------------------------ tokens
def test_tokens_are_random_with_at_least_128_bits():
    tokens = {auth.new_token() for _ in range(2000)}
    assert len(tokens) == 2000
    for token in list(tokens)[:50]:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        assert len(raw) * 8 >= 128


def test_tokens_are_stored_only_as_sha256(tmp_path):
    study = make_study(tmp_path, n_items=2)
    invites = studies.invite(study, 3)
    engine = storage.get_engine()
    with engine.connect() as conn:
        dump = "\n".join(repr(row) for table in ("annotator", "event", "setting", "study")
                         for row in conn.execute(text(f"SELECT * FROM {table}")))
        stored = set(conn.execute(text("SELECT token_hash FROM annotator")).scalars())
    for invite in invites:
        assert invite.token not in dump
        assert hashlib.sha256(invite.token.encode()).hexdigest() in stored


# ------------------------------------------------------------------------ revocation
def test_revoke_from_the_command_line_refuses_the_link(tmp_path, capsys):
    study = make_study(tmp_path, n_items=3)
    (alice,) = studies.invite(study, labels=["alice"])
    (bob,) = studies.invite(study, labels=["bob"])
    alice_id = annotator_id(alice.token)
    task = assignment.next_item(alice_id)
    assignment.submit(alice_id, task.assignment_id, 3, 1.0)
    task = assignment.next_item(alice_id)  # claimed, not yet answered

    assert cli.main(["revoke", "t", "alice"]) == 0
    assert "revoked 'alice'" in capsys.readouterr().out
    assert assignment.resolve_token(alice.token) is None
    assert assignment.resolve_token(bob.token) is not None
    with pytest.raises(InputError, match="withdrawn"):  # an answer already on its way
        assignment.submit(alice_id, task.assignment_id, 2, 1.0)
    with pytest.raises(InputError, match="withdrawn"):
        assignment.next_item(alice_id)
    with storage.read_session() as session:  # earlier answers are kept
        assert [r.response for r in session.exec(select(Rating))] == ["3"]
    assert [e.annotator_id for e in events("annotator_revoked")] == [alice_id]
    status = {a["annotator"]: a["status"] for a in studies.progress(study)["annotators"]}
    assert status == {"alice": "revoked", "bob": "invited"}

    at = open_app(token=alice.token)
    assert "This link is not valid" in at.error[0].value
    assert not at.button and not at.title

    assert cli.main(["revoke", "t", "alice"]) == 2
    assert cli.main(["revoke", "t", "carol"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["error: annotator 'alice' is already revoked",
                   "error: the study has no annotator 'carol'"]


def test_revoked_prolific_participant_is_refused(tmp_path):
    make_study(tmp_path, n_items=2, extra="[prolific]\ncompletion_code = \"C\"\n")
    ids = ("5f8a1b2c3d4e5f6a7b8c9d01", "64a1b2c3d4e5f6a7b8c9d0e1", "65b2c3d4e5f6a7b8c9d0e1f2")
    annotator = assignment.join_prolific("t", *ids)
    study_id = annotator.study_id
    studies.revoke(study_id, annotator.pseudonym)
    with pytest.raises(InputError, match="withdrawn"):
        assignment.join_prolific("t", *ids)
    at = open_app(study="t", PROLIFIC_PID=ids[0], STUDY_ID=ids[1], SESSION_ID=ids[2])
    assert "withdrawn" in at.error[0].value and not at.button


def test_console_revoke_control(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "s3cret-pw")
    study = make_study(tmp_path, n_items=2)
    (alice,) = studies.invite(study, labels=["alice"])
    studies.invite(study, labels=["bob"])
    at = console_page("s3cret-pw", tab="Invite")
    assert not at.exception
    at.selectbox(key=f"revoke-who-{study}").select("alice")
    at.button(key=f"revoke-{study}").click().run()
    assert not at.exception
    assert any("Revoked alice" in s.value for s in at.success)
    assert assignment.resolve_token(alice.token) is None
    at.run()
    assert at.selectbox(key=f"revoke-who-{study}").options == ["bob"]


# ------------------------------------------------------------------------ scope
def test_an_annotator_cannot_submit_to_or_read_another_annotators_item(tmp_path):
    study = make_study(tmp_path, n_items=4)
    a, b = studies.invite(study, 2)
    a_id, b_id = annotator_id(a.token), annotator_id(b.token)
    b_task = assignment.next_item(b_id)
    assignment.next_item(a_id)
    with pytest.raises(InputError, match="not assigned to you"):
        assignment.submit(a_id, b_task.assignment_id, 4, 1.0)
    with pytest.raises(InputError, match="not assigned to you"):
        assignment.submit(a_id, 10_000, 4, 1.0)  # no such assignment
    with storage.read_session() as session:
        assert list(session.exec(select(Rating))) == []
    assignment.submit(b_id, b_task.assignment_id, 1, 1.0)
    # revisiting goes through the annotator's own sequence only
    assert assignment.task_before(a_id, None) is None
    assert assignment.task_at(a_id, b_task.position).assignment_id != b_task.assignment_id


def test_a_token_is_scoped_to_its_study(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    study_a = make_study(tmp_path / "a", n_items=2, slug="alpha")
    make_study(tmp_path / "b", n_items=2, slug="beta")
    (invite,) = studies.invite(study_a, 1)
    at = open_app(token=invite.token, study="beta")
    assert not at.exception
    assert at.title[0].value == "Test study"
    annotator = annotator_id(invite.token)
    with storage.read_session() as session:
        assert session.get(Annotator, annotator).study_id == study_a
    # the page shows only the own study's items
    at.button(key="start").click().run()
    task = assignment.next_item(annotator)
    with storage.read_session() as session:
        from studyapp.core.models import Assignment
        assert session.get(Assignment, task.assignment_id).study_id == study_a


def test_an_annotator_link_does_not_open_the_console(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "s3cret-pw")
    study = make_study(tmp_path, n_items=2)
    (invite,) = studies.invite(study, 1)
    at = console_page(token=invite.token)
    assert at.title[0].value == "Researcher console"
    assert not at.tabs and not at.dataframe and [b.label for b in at.button] == ["Sign in"]
    at = open_app(token=invite.token)  # the annotator page shows no other annotator's answers
    assert not at.dataframe and not at.tabs


# ------------------------------------------------------------------------ console password
def test_console_password_is_stored_with_scrypt():
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    with storage.read_session() as session:
        stored = session.get(Setting, auth.ADMIN_KEY).value
    assert password not in stored
    scheme, salt, digest = stored.split("$")
    assert scheme == "scrypt" and auth.SCRYPT["n"] >= 2**14
    expected = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), dklen=32, n=2**14,
                              r=8, p=1)
    assert base64.b64decode(digest) == expected


class FakeClock:
    def __init__(self):
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self):
        return self.now

    def advance(self, seconds: float):
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(auth, "clock", fake)
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "right-pw")
    return fake


def attempt(password: str, source: str = "10.0.0.1") -> auth.LoginResult:
    with storage.write_session() as session:
        return auth.admin_login(session, password, source)


def test_failed_logins_back_off_exponentially_and_persist(clock):
    for k in range(3):  # three free guesses
        assert attempt("guess") == auth.LoginResult(False, False, 1.0 if k == 2 else 0.0)
    # the fourth comes too early: refused without checking, even with the right password
    result = attempt("right-pw")
    assert result.throttled and not result.ok and result.wait_seconds == pytest.approx(1.0)
    clock.advance(1.0)
    assert attempt("guess") == auth.LoginResult(False, False, 2.0)  # 4th failure: wait 2 s
    clock.advance(1.5)
    assert attempt("right-pw").throttled
    storage.dispose_all()  # the state is in the database, not in memory
    clock.advance(0.5)
    assert attempt("guess").wait_seconds == 4.0
    # another address is not slowed down by this one
    assert attempt("right-pw", source="10.0.0.2").ok
    clock.advance(4.0)
    assert attempt("right-pw").ok
    clock.advance(0.0)
    assert attempt("guess") == auth.LoginResult(False, False, 0.0)  # success reset the count
    kinds = [e.kind for e in events("admin_login_failed")] + [e.kind for e in events("admin_login_throttled")]
    assert kinds.count("admin_login_failed") == 6 and kinds.count("admin_login_throttled") == 2
    assert '"source": "10.0.0.1"' in events("admin_login_throttled")[0].detail


def test_the_delay_is_capped():
    assert [auth.backoff_delay(n) for n in range(6)] == [0, 0, 0, 1, 2, 4]
    assert auth.backoff_delay(40) == auth.LOGIN_MAX_DELAY_S == 900


def test_many_sources_together_are_slowed_down_globally(clock):
    for k in range(auth.LOGIN_FREE_ATTEMPTS_GLOBAL):
        assert not attempt("guess", source=f"10.1.0.{k}").throttled
    assert attempt("right-pw", source="10.2.0.1").throttled


def test_console_page_shows_the_backoff(clock):
    for _ in range(3):
        at = console_page("guess")
        assert at.error[0].value == "Wrong account or password."
    at = console_page("right-pw")
    assert at.error[0].value == "Too many failed sign-ins: wait 1 s, then try again."
    assert not at.tabs
    clock.advance(1.0)
    at = console_page("right-pw")
    assert not at.error and not at.exception


# ------------------------------------------------------------------------ XSRF
def test_serve_keeps_xsrf_protection_on():
    cmd = cli.streamlit_command(8599, "127.0.0.1")
    options = cmd[cmd.index(str(cli.WEB)) + 1:]
    flags = dict(zip(options[::2], options[1::2]))
    assert flags["--server.enableXsrfProtection"] == "true"
    assert flags["--runner.postScriptGC"] == "false"  # ~80 ms per answer
    assert flags["--server.fileWatcherType"] == "none"  # polled every module per session
    assert "--server.enableCORS" not in flags or flags["--server.enableCORS"] == "true"
    assert not any("xsrf" in c.lower() and "false" in c.lower() for c in cmd)
    config_file = ROOT / ".streamlit" / "config.toml"
    if config_file.exists():
        server = tomllib.loads(config_file.read_text()).get("server", {})
        assert server.get("enableXsrfProtection", True) is True
    from streamlit import config
    assert config.get_option("server.enableXsrfProtection") is True


def test_the_console_never_shows_the_database_password(tmp_path, monkeypatch):
    """Served on PostgreSQL with a password in DATABASE_URL, the console names the database
    (user, host, name) with the password masked, for every signed-in account."""
    from dbhelpers import postgres_schema, postgres_url_or_skip
    from sqlalchemy.engine import make_url

    with postgres_schema(postgres_url_or_skip()) as url:
        password = make_url(url).password
        assert password
        monkeypatch.setenv("DATABASE_URL", url)
        monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "s3cret-pw")
        at = console_page("s3cret-pw")
        assert not at.exception
        shown = " ".join(m.value for m in at.sidebar.markdown)
        assert "Database:" in shown and "***" in shown and make_url(url).host in shown
        everything = " ".join(str(e.value) for kind in ("markdown", "caption", "text", "code", "error")
                              for e in getattr(at, kind))
        assert password not in shown and password not in everything
