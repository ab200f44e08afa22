"""Researcher accounts, roles and the audit log: permissions are enforced in
the module functions, every action is audited with its actor in the action's own transaction,
passwords are salted scrypt hashes, and the console signs accounts in."""

import subprocess
import sys

import pytest
from projectpaths import ROOT
from sqlmodel import select
from studyhelpers import signed_in, write_spec

from metrics import InputError
from studyapp.core import accounts, auth, storage
from studyapp.core.accounts import Actor
from studyapp.core.models import Annotator, Event, Researcher, Study
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import exports, studies

ALICE, BOB, VIEW = Actor("alice", "researcher"), Actor("bob", "researcher"), Actor("vera", "viewer")


@pytest.fixture
def two_studies(tmp_path):
    for who in ("alice", "bob"):
        accounts.add_account(who, "researcher", f"{who}-password")
    accounts.add_account("vera", "viewer", "vera-password")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = studies.create_study(load_spec(write_spec(tmp_path / "a", slug="sa")), actor=ALICE)
    b = studies.create_study(load_spec(write_spec(tmp_path / "b", slug="sb")), actor=BOB)
    return a, b


def study(study_id):
    with storage.read_session() as session:
        return session.get(Study, study_id)


def audit():
    with storage.read_session() as session:
        return [(e.kind, e.actor, e.study_id) for e in session.exec(select(Event).order_by(Event.id))
                if e.kind in accounts.AUDITED]


def test_passwords_are_salted_scrypt_hashes(tmp_path):
    accounts.add_account("alice", "researcher", "correct horse")
    accounts.add_account("bob", "researcher", "correct horse")
    with storage.read_session() as session:
        hashes = [r.password_hash for r in session.exec(select(Researcher).order_by(Researcher.id))]
    assert all(h.startswith("scrypt$") and "correct horse" not in h for h in hashes)
    assert hashes[0] != hashes[1]                       # a salt per account
    assert auth.check_slow_hash("correct horse", hashes[0])
    with storage.write_session() as session:
        ok, who = accounts.sign_in(session, "alice", "correct horse", "10.0.0.1")
        wrong, nobody = accounts.sign_in(session, "alice", "wrong horse", "10.0.0.1")
        unknown, _ = accounts.sign_in(session, "mallory", "correct horse", "10.0.0.1")
    assert ok.ok and who == Actor("alice", "researcher")
    assert not wrong.ok and nobody is None and not unknown.ok
    with pytest.raises(InputError, match="at least 12 characters, got 5"):
        accounts.add_account("carol", "viewer", "short")
    with pytest.raises(InputError, match="exists already"):
        accounts.add_account("alice", "viewer", "another password")
    with pytest.raises(InputError, match="role must be one of"):
        accounts.add_account("carol", "admin", "long enough")


def test_the_console_password_is_the_first_owner(monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "env-password")
    with storage.write_session() as session:
        result, who = accounts.sign_in(session, "", "env-password", None)
    assert result.ok and who == accounts.FIRST_OWNER


def test_sign_in_backoff_holds_for_accounts(monkeypatch):
    accounts.add_account("alice", "researcher", "alice-password")
    results = []
    for _ in range(4):
        with storage.write_session() as session:
            results.append(accounts.sign_in(session, "alice", "guess", "10.0.0.9")[0])
    assert results[-1].throttled and results[-1].wait_seconds > 0
    with storage.write_session() as session:  # refused unchecked, even with the right password
        assert accounts.sign_in(session, "alice", "alice-password", "10.0.0.9")[0].throttled


def test_researchers_see_and_change_only_their_own_studies(two_studies, tmp_path):
    a, b = two_studies
    assert study(a).owner == "alice" and study(b).owner == "bob"
    assert [s.slug for s in accounts.visible(ALICE, studies.list_studies())] == ["sa"]
    assert [s.slug for s in accounts.visible(VIEW, studies.list_studies())] == ["sa", "sb"]
    studies.set_status(a, "paused", actor=ALICE)
    for call in (lambda: studies.set_status(b, "paused", actor=ALICE),
                 lambda: studies.invite(b, 1, actor=ALICE)):
        with pytest.raises(InputError, match=r"alice \(researcher\) may not change study 'sb'"):
            call()
    with pytest.raises(InputError, match=r"no study named 'sb'"):   # by name: as if it did not exist
        exports.export_study("sb", actor=ALICE)
    with pytest.raises(InputError, match=r"vera \(viewer\) may not change study 'sa'"):
        studies.set_status(a, "closed", actor=VIEW)
    (tmp_path / "v").mkdir()
    with pytest.raises(InputError, match=r"vera \(viewer\) may not create studies"):
        studies.create_study(load_spec(write_spec(tmp_path / "v", slug="sv")), actor=VIEW)
    with pytest.raises(InputError, match="may not manage accounts"):
        accounts.add_account("eve", "owner", "eve-password", actor=ALICE)
    assert study(b).status == "open" and study(a).status == "paused"
    studies.set_status(b, "closed")               # the command line acts as the owner
    assert study(b).status == "closed"


def test_every_action_is_audited_with_its_actor_and_refusals_leave_no_entry(two_studies, tmp_path):
    a, b = two_studies
    before = audit()
    assert before[-2:] == [("study_created", "alice", a), ("study_created", "bob", b)]
    studies.invite(a, 2, actor=ALICE)
    studies.set_status(a, "paused", actor=ALICE)
    exports.export_study("sa", tmp_path / "out", actor=ALICE)
    with pytest.raises(InputError):
        studies.set_status(b, "paused", actor=ALICE)
    with pytest.raises(InputError):
        studies.set_status(a, "nonsense", actor=ALICE)
    assert audit()[len(before):] == [("invites_created", "alice", a), ("status_changed", "alice", a),
                                      ("exported", "alice", a)]
    log = accounts.audit_log(accounts.FIRST_OWNER)
    assert list(log["action"][:3]) == ["exported", "status changed", "invited"]
    assert list(log["who"][:3]) == ["alice"] * 3 and list(log["study"][:3]) == ["sa"] * 3
    # a researcher reads her own actions and those on her studies, not bob's
    assert set(accounts.audit_log(ALICE)["study"]) == {"sa"}
    assert set(accounts.audit_log(BOB)["who"]) == {"bob"}


def test_cli_account_commands(tmp_path):
    env = {"STUDYAPP_DB": str(tmp_path / "cli.sqlite"), "PATH": "/usr/bin:/bin"}

    def cli(*args, stdin=""):
        return subprocess.run([sys.executable, "-m", "studyapp", "account", *args], cwd=ROOT, env=env,
                              input=stdin, capture_output=True, text=True)

    assert cli("add", "alice", "--role", "researcher", stdin="alice-password\n").returncode == 0
    listed = cli("list")
    assert "alice" in listed.stdout and "researcher" in listed.stdout
    refused = cli("add", "bob", "--role", "researcher", stdin="short\n")
    assert refused.returncode == 2 and refused.stderr.strip() == "error: password: at least 12 characters, got 5"
    assert cli("set-password", "alice", stdin="new-alice-password\n").returncode == 0
    assert "bob" not in cli("list").stdout                   # the refused account was not made
    url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    with storage.write_session(storage.get_engine(url)) as session:   # the new password signs in
        assert accounts.sign_in(session, "alice", "new-alice-password", "10.0.0.2")[0].ok
        assert not accounts.sign_in(session, "alice", "alice-password", "10.0.0.2")[0].ok
    with storage.read_session(storage.get_engine(url)) as session:
        created = session.exec(select(Event).where(Event.kind == "account_created")).one()
    assert created.actor == "cli"


AREAS = ("Studies", "Create", "Matrices", "Scoring", "Accounts", "Audit log")   # the console's top-level tabs


def test_console_signs_in_an_account_and_shows_its_studies_only(two_studies):
    at = signed_in("alice", "alice-password")
    # the console is drawn in the sign-in's own run, the form emptied away (no second run)
    assert [t.value for t in at.title] == ["Researcher console"]
    assert not [t for t in at.text_input if t.key == "signin-password"] and not at.get("form")
    assert at.selectbox[0].options == ["sa — Test study (open)"]
    assert [t.label for t in at.tabs if t.label in AREAS] == ["Studies", "Create", "Matrices", "Scoring", "Audit log"]
    at = signed_in("vera", "vera-password")
    assert len(at.selectbox[0].options) == 2
    assert "Create a study" not in [h.value for h in at.subheader]
    labels = [t.label for t in at.tabs]
    # no create or accounts area, and no invite or export tab, for a viewer
    assert [t for t in labels if t in AREAS] == ["Studies", "Matrices", "Scoring", "Audit log"]
    assert [t for t in labels if t not in AREAS] == ["Dashboard", "Details", "Progress", "Preview"]


def test_the_audit_entry_and_its_action_commit_together(two_studies, monkeypatch):
    a, _ = two_studies
    before = audit()
    with storage.read_session() as session:
        annotators = len(session.exec(select(Annotator)).all())

    def entry_then_failure(*args, **kwargs):
        storage.log_event(*args, **kwargs)
        raise RuntimeError("disk full")           # the audit write fails inside the action's transaction

    monkeypatch.setattr(studies, "log_event", entry_then_failure)
    with pytest.raises(RuntimeError):
        studies.invite(a, 2, actor=ALICE)
    with pytest.raises(RuntimeError):
        studies.set_status(a, "paused", actor=ALICE)
    assert audit() == before and study(a).status == "open"
    with storage.read_session() as session:
        assert len(session.exec(select(Annotator)).all()) == annotators
