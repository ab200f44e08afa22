"""Console and command line do the same things: study owners (`create
--owner`, `owner`, the console's owner form), with-image invites of an earlier study's
annotators, duplicate-tolerant invites, invite links on the address `serve` serves, and the
Prolific hint only on Prolific studies. Commands run as processes on real files; a command
that only prepares a test's study, or repeats an outcome a process already showed, runs
in-process through the same entry point."""

import os
import re
import subprocess
import sys
import time

import pytest
from browserhelpers import free_port
from faults import run_in_process
from projectpaths import ROOT
from sqlmodel import select
from studyhelpers import console_page, make_annotators, open_tab, signed_in, write_spec

from metrics import InputError
from studyapp.core import accounts, storage
from studyapp.core.accounts import Actor
from studyapp.core.models import Annotator, Event
from studyapp.platform import assignment
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

ALICE, BOB = Actor("alice", "researcher"), Actor("bob", "researcher")


def cli(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "studyapp", *args], cwd=ROOT, env=dict(os.environ),
                          input=stdin, capture_output=True, text=True)


def cli_in_process(capsys, *args):
    """``python -m studyapp ARGS`` through its entry point in this process: (status, stdout, stderr)."""
    return run_in_process("studyapp", list(args), capsys)


def owner_of(slug):
    with storage.read_session() as session:
        return studies.study_by_slug(session, slug).owner


def pseudonyms(study_id):
    with storage.read_session() as session:
        return list(session.exec(select(Annotator.pseudonym).where(Annotator.study_id == study_id)
                                 .order_by(Annotator.id)))


def events(kind):
    with storage.read_session() as session:
        return [(e.actor, e.study_id, e.detail) for e in session.exec(select(Event).where(Event.kind == kind))]


def study_choices(at):
    return [o for s in at.selectbox if s.label == "Study" for o in s.options]


@pytest.fixture
def accounts_made():
    accounts.add_account("alice", "researcher", "alice-password")
    accounts.add_account("bob", "researcher", "bob-password")
    accounts.add_account("vera", "viewer", "vera-password")


def test_create_owner_on_the_command_line_makes_the_study_visible_to_that_researcher(tmp_path, accounts_made,
                                                                                     capsys):
    spec = write_spec(tmp_path, slug="s1")
    refused = cli("create", str(spec), "--owner", "vera")            # a viewer may not own studies
    assert refused.returncode == 2
    assert refused.stderr.strip() == ("error: owner 'vera': no owner or researcher account has this name "
                                      "(accounts that may own studies: owner, alice, bob)")
    assert studies.list_studies() == []                                # nothing was written
    made = cli("create", str(spec), "--owner", "alice")
    assert made.returncode == 0 and "owned by 'alice'" in made.stdout
    assert owner_of("s1") == "alice"
    assert study_choices(signed_in("alice", "alice-password")) == ["s1 — Test study (open)"]
    assert study_choices(signed_in("bob", "bob-password")) == []     # bob has no studies
    write_spec(tmp_path, slug="s2")
    assert cli_in_process(capsys, "create", str(tmp_path / "s2.toml"))[0] == 0
    assert owner_of("s2") == "cli"                                     # the default is unchanged


def test_owner_reassigned_by_the_owner_or_the_platform_owner_only(tmp_path, accounts_made):
    study = studies.create_study(load_spec(write_spec(tmp_path, slug="s")), actor=ALICE)
    with pytest.raises(InputError, match=r"bob \(researcher\) may not change study 's'"):
        studies.set_owner(study, "bob", actor=BOB)                     # not bob's study
    with pytest.raises(InputError, match="may not change"):
        studies.set_owner(study, "bob", actor=Actor("vera", "viewer"))
    with pytest.raises(InputError, match="no owner or researcher account has this name"):
        studies.set_owner(study, "nobody", actor=ALICE)
    assert owner_of("s") == "alice" and events("owner_changed") == []
    assert studies.set_owner(study, "bob", actor=ALICE) == "alice"     # alice gives it away ...
    with pytest.raises(InputError, match="may not change"):
        studies.invite(study, 1, actor=ALICE)                          # ... and may no longer change it
    studies.invite(study, 1, actor=BOB)
    done = cli("owner", "s", "alice")                                  # the command line acts as the owner
    assert done.returncode == 0 and done.stdout.strip() == "study 's' now belongs to 'alice' (before: 'bob')"
    assert [(a, d) for a, _, d in events("owner_changed")] == [
        ("alice", '{"new": "bob", "old": "alice"}'), ("cli", '{"new": "alice", "old": "bob"}')]
    assert [row["action"] for row in accounts.audit_log(accounts.FIRST_OWNER).to_dict("records")][:3] == [
        "owner changed", "invited", "owner changed"]                   # newest first


def test_console_owner_form_gives_the_study_away(tmp_path, accounts_made):
    studies.create_study(load_spec(write_spec(tmp_path, slug="s")), actor=ALICE)
    at = open_tab(signed_in("alice", "alice-password"), "Progress")   # only the open tab runs
    form = next(f for f in at.text_input if f.label == "Give this study to the account")
    form.set_value("bob")
    next(b for b in at.button if b.label == "Change owner").click().run()
    assert [s.value.replace("\\", "") for s in at.success] == ["Study s now belongs to bob."]
    assert owner_of("s") == "bob"
    assert study_choices(signed_in("alice", "alice-password")) == []
    at = open_tab(signed_in("bob", "bob-password"), "Progress")
    assert study_choices(at) == ["s — Test study (open)"]
    form = next(f for f in at.text_input if f.label == "Give this study to the account")
    form.set_value("vera")                                             # a viewer: refused, one line
    next(b for b in at.button if b.label == "Change owner").click().run()
    assert [e.value.replace("\\", "") for e in at.error] == ["owner 'vera': no owner or researcher account has this name "
                                           "(accounts that may own studies: owner, alice, bob)"]
    assert owner_of("s") == "bob"


def test_cli_invite_creates_the_new_labels_and_names_each_existing_one(tmp_path, capsys):
    write_spec(tmp_path, slug="t")
    assert cli_in_process(capsys, "create", str(tmp_path / "t.toml"))[0] == 0
    assert cli_in_process(capsys, "invite", "t", "--label", "ann4")[0] == 0
    twice = cli("invite", "t", "--label", "zed", "--label", "zed")   # one command, one value twice: refused
    assert twice.returncode == 2 and twice.stdout == ""
    assert twice.stderr.splitlines() == ["error: --label 'zed' is given twice in this command: give each value once"]
    both = cli("invite", "t", "--label", "ann4", "--label", "zed")
    assert both.returncode == 0
    assert [line.split("\t")[0] for line in both.stdout.splitlines()] == ["zed"]
    assert both.stderr.splitlines()[:1] == ["not created: the pseudonym 'ann4' is already used in 't'"]
    assert both.stderr.splitlines()[-1] == "created 1 invite(s); 1 pseudonym(s) already used were skipped"
    none = cli("invite", "t", "--label", "zed")
    assert none.returncode == 2 and none.stdout == ""
    assert none.stderr.splitlines()[-1] == "error: no invite created: every pseudonym given is already used in 't' (zed)"
    with storage.read_session() as session:
        study_id = studies.study_by_slug(session, "t").id
    assert pseudonyms(study_id) == ["ann4", "zed"]


def test_console_invites_the_annotators_of_an_earlier_study(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw-console-1")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = studies.create_study(load_spec(write_spec(tmp_path / "a", slug="first", n_items=2, raters=2)))
    second = studies.create_study(load_spec(write_spec(tmp_path / "b", slug="second", n_items=2)))
    rated, _idle = make_annotators(first, 2)                           # the second one never rates
    task = assignment.next_item(rated)
    assignment.submit(rated, task.assignment_id, 3, 1.0)               # only the first one rated
    studies.invite_names(second, [pseudonyms(first)[0]])               # already invited there
    at = console_page("pw-console-1", tab="Invite")
    at.selectbox[0].set_value("second").run()
    box = next(s for s in at.selectbox if s.label.startswith("Or invite the annotators of an earlier study"))
    box.set_value("first").run()
    next(b for b in at.button if b.label == "Invite its annotators").click().run()
    assert [w.value.replace("\\", "") for w in at.warning if "Not created" in w.value] == [
        f"Not created: the pseudonym {pseudonyms(first)[0]} is already used in this study."]
    assert pseudonyms(second) == [pseudonyms(first)[0]]                # nothing new: the one rater was there
    (late,) = make_annotators(first, 1)
    assignment.submit(late, assignment.next_item(late).assignment_id, 2, 1.0)
    next(b for b in at.button if b.label == "Invite its annotators").click().run()
    assert pseudonyms(second)[1:] == [pseudonyms(first)[-1]]           # the new rater, same pseudonym


def test_prolific_hint_only_on_prolific_studies(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw-console-1")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    studies.create_study(load_spec(write_spec(tmp_path / "a", slug="plain")))
    studies.create_study(load_spec(write_spec(tmp_path / "b", slug="pro",
                                              extra='[prolific]\ncompletion_code = "C0DE"\n')))
    at = console_page("pw-console-1", tab="Invite")
    assert not [c for c in at.caption if "Prolific" in c.value]
    at.selectbox[0].set_value("pro").run()
    hints = [c.value for c in at.caption if "Prolific" in c.value]
    assert len(hints) == 1 and "study=pro&PROLIFIC_PID=" in hints[0] and "completion code C0DE" in hints[0]


def test_cli_invite_links_use_the_address_serve_serves_on(tmp_path, capsys):
    write_spec(tmp_path, slug="t")
    assert cli_in_process(capsys, "create", str(tmp_path / "t.toml"))[0] == 0
    _status, _out, before = cli_in_process(capsys, "invite", "t")
    assert before.splitlines()[0] == ("links use http://localhost:8501 (no server has recorded its "
                                             "address yet: the default; --base-url to change)")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("STUDYAPP_BASE_URL", "STUDYAPP_PORT")}
    server = subprocess.Popen([sys.executable, "-m", "studyapp", "serve", "--port", str(port), "--no-demo",
                               "--address", "127.0.0.1"], cwd=ROOT, env={**env, "STUDYAPP_ADMIN_PASSWORD": "pw-serve-1"},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        for line in server.stdout:                                     # serve records before Streamlit starts
            if "researcher console" in line or time.monotonic() > deadline:
                break
    finally:
        server.terminate()
        server.wait(timeout=30)
    after = subprocess.run([sys.executable, "-m", "studyapp", "invite", "t", "--n", "2"], cwd=ROOT, env=env,
                           capture_output=True, text=True)
    assert after.returncode == 0
    assert after.stderr.splitlines()[0] == (f"links use http://localhost:{port} (the address `serve` recorded "
                                            "when it last started; --base-url to change)")
    links = [line.split("\t")[1] for line in after.stdout.splitlines()]
    assert len(links) == 2 and all(re.fullmatch(rf"http://localhost:{port}/\?token=[\w-]+", link) for link in links)
    _status, given_out, given_err = cli_in_process(capsys, "invite", "t", "--base-url", "https://study.example.org/")
    assert given_out.split("\t")[1].startswith("https://study.example.org/?token=")
    assert given_err.splitlines()[0] == "links use https://study.example.org (--base-url; --base-url to change)"
