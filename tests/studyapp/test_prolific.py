"""Prolific's lifecycle: completion codes by outcome, the comprehension check
with two attempts, Prolific's statuses passed in (its submissions export, or one participant)
and returned / timed-out submissions giving their unanswered items to the next participant.
Participants arrive with Prolific's own URL parameters; everything is checked in the database."""

import os
import subprocess
import sys

import pandas as pd
import pytest
from projectpaths import ROOT
from sqlmodel import select
from studyhelpers import console_page, write_spec

from metrics import InputError
from studyapp.core import storage
from studyapp.core.models import Annotator, Assignment, Event, Item
from studyapp.platform import assignment
from studyapp.platform.assignment import prolific
from studyapp.platform.commands.cli import main as cli_main
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

CODES = ('[prolific]\ncompletion_code = "C0MPLETE"\nattention_failed_code = "ATTNFAIL"\n'
         'screened_out_code = "SCREENED"\n'
         'completion_url = "https://app.prolific.com/submissions/complete?cc=C0MPLETE"\n')
CHECK = ('[comprehension]\nquestion = "What do you rate?"\n'
         'options = ["The photo quality", "How similar two interactions are"]\n'
         'answer = "How similar two interactions are"\n')
# Prolific's ids are 24 hexadecimal characters
PIDS = ["5f8a1b2c3d4e5f6a7b8c9d01", "5f8a1b2c3d4e5f6a7b8c9d02", "5f8a1b2c3d4e5f6a7b8c9d03",
        "5f8a1b2c3d4e5f6a7b8c9d04"]


def study_with(tmp_path, extra="", **kwargs):
    return studies.create_study(load_spec(write_spec(tmp_path, extra=extra, **kwargs)))


def join(pid, k=0):
    return assignment.join_prolific("t", pid, "64a1b2c3d4e5f6a7b8c9d0e1", f"{k:024x}").id


def claims(study_id):
    """(item key, slot, annotator's Prolific id, answered) of every main claim, by item and slot."""
    with storage.read_session() as session:
        rows = session.exec(select(Item.item_key, Assignment.slot, Annotator.prolific_pid, Assignment.answered_at)
                            .join(Item, Item.id == Assignment.item_id)
                            .join(Annotator, Annotator.id == Assignment.annotator_id)
                            .where(Assignment.study_id == study_id, Assignment.phase == "main")
                            .order_by(Item.item_key, Assignment.slot)).all()
        counters = dict(session.exec(select(Item.item_key, Item.n_claims).where(Item.study_id == study_id)).all())
    return [(key, slot, pid, answered is not None) for key, slot, pid, answered in rows], counters


def test_spec_reads_the_codes_and_the_comprehension_check(tmp_path):
    spec = load_spec(write_spec(tmp_path, extra=CODES + CHECK))
    assert (spec.completion_code, spec.attention_failed_code, spec.screened_out_code, spec.attention_fail_limit) == (
        "C0MPLETE", "ATTNFAIL", "SCREENED", 2)
    assert spec.comprehension == {"question": "What do you rate?", "answer": "How similar two interactions are",
                                  "options": ["The photo quality", "How similar two interactions are"]}
    bad = [('[prolific]\ncompletion_code = "A"\nscreened_out_code = "A"\n',
            "key 'prolific.screened_out_code' must differ from the other completion codes"),
           ('[comprehension]\nquestion = "Q"\noptions = ["a", "b"]\nanswer = "c"\n',
            "key 'comprehension.answer' must be one of the options, got 'c'"),
           ('[comprehension]\nquestion = "Q"\noptions = ["a"]\nanswer = "a"\n',
            "key 'comprehension.options' must be a list of at least two non-empty strings"),
           ('[prolific]\ncompletion_code = "A"\nattention_fail_limit = 0\n',
            "key 'prolific.attention_fail_limit' must be a whole number ≥ 1")]
    for k, (extra, message) in enumerate(bad):
        folder = tmp_path / f"bad{k}"
        folder.mkdir()
        with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
            load_spec(write_spec(folder, extra=extra))


def test_returned_and_timed_out_submissions_give_their_unanswered_items_to_the_next_participant(tmp_path, db_backend):
    # 3 items, 2 raters each, 2 items per participant, fixed order: every claim is predictable
    study = study_with(tmp_path, 'order = "fixed"\n' + CODES, n_items=3, raters=2, per_annotator=2)
    first, second = join(PIDS[0], 0), join(PIDS[1], 1)
    for who in (first, second):
        assignment.accept_instructions(who)
    task = assignment.next_item(first)                       # i01 slot 0, answered
    assignment.submit(first, task.assignment_id, 3, 2.0)
    open_first = assignment.next_item(first)                 # i02 slot 0, left open
    task = assignment.next_item(second)                      # i03 slot 0 (least claimed), answered
    assignment.submit(second, task.assignment_id, 1, 2.0)
    assert assignment.next_item(second).item_key == "i01"    # i01 slot 1, left open
    assert claims(study) == ([("i01", 0, PIDS[0], True), ("i01", 1, PIDS[1], False), ("i02", 0, PIDS[0], False),
                              ("i03", 0, PIDS[1], True)], {"i01": 2, "i02": 1, "i03": 1})

    report = prolific.apply_statuses(study, [(PIDS[0], "RETURNED"), (PIDS[1], "TIMED-OUT"),
                                             ("5f8a1b2c3d4e5f6a7b8c9dff", "RETURNED")], source="test")
    assert [c[2:] for c in report.changed] == [(None, "RETURNED", 1), (None, "TIMED-OUT", 1)]
    assert report.unknown == ["5f8a1b2c3d4e5f6a7b8c9dff"] and report.unchanged == 0
    # only the answered claims remain; i01's second slot was freed, slots stay 0..n_claims-1
    assert claims(study) == ([("i01", 0, PIDS[0], True), ("i03", 0, PIDS[1], True)],
                             {"i01": 1, "i02": 0, "i03": 1})
    for who in (first, second):                              # their sessions have ended, politely
        with pytest.raises(InputError, match="Prolific reports your submission as (returned|timed out)"):
            assignment.next_item(who)
    with pytest.raises(InputError, match="Prolific reports your submission as returned"):
        assignment.submit(first, open_first.assignment_id, 2, 1.0)
    with pytest.raises(InputError, match="returned"):
        join(PIDS[0], 0)                                     # the same Prolific link again

    third = join(PIDS[2], 2)                                 # the next participant gets the places
    assignment.accept_instructions(third)
    got = []
    for _ in range(2):
        task = assignment.next_item(third)
        got.append(task.item_key)
        assignment.submit(third, task.assignment_id, 2, 1.0)
    assert got == ["i02", "i01"] and assignment.next_item(third) is None   # done: completed
    with storage.read_session() as session:                  # released claims keep their rows: no id is reused
        rows = session.exec(select(Assignment.id, Assignment.annotator_id, Assignment.phase, Assignment.slot)
                            .order_by(Assignment.id)).all()
    assert [(a, p, s) for _i, a, p, s in rows] == [(first, "main", 0), (first, "released", None),
                                                   (second, "main", 0), (second, "released", None),
                                                   (third, "main", 0), (third, "main", 1)]
    assert claims(study)[1] == {"i01": 2, "i02": 1, "i03": 1}
    again = prolific.apply_statuses(study, [(PIDS[0], "RETURNED"), (PIDS[2], "APPROVED")], source="test")
    assert [c[2:] for c in again.changed] == [(None, "APPROVED", 0)] and again.unchanged == 1
    progress = {a["annotator"]: a["status"] for a in studies.progress(study)["annotators"]}
    assert sorted(progress.values()) == ["completed", "returned", "timed out"]
    assert prolific.summary(study) == {"approved": 1, "returned": 1, "timed out": 1}


def test_a_freed_middle_slot_takes_the_highest_one(tmp_path, db_backend):
    study = study_with(tmp_path, 'order = "fixed"\n' + CODES, n_items=1, raters=3)
    ids = [join(pid, k) for k, pid in enumerate(PIDS[:3])]
    for who in ids:
        assignment.accept_instructions(who)
        assignment.next_item(who)                             # slots 0, 1, 2 of i01
    prolific.apply_statuses(study, [(PIDS[1], "RETURNED")])
    assert claims(study) == ([("i01", 0, PIDS[0], False), ("i01", 1, PIDS[2], False)], {"i01": 2})
    fourth = join(PIDS[3], 3)
    assignment.accept_instructions(fourth)
    assert assignment.next_item(fourth).item_key == "i01"
    assert claims(study)[0][-1] == ("i01", 2, PIDS[3], False)


def test_comprehension_check_two_attempts_then_screened_out_with_its_code(tmp_path):
    study = study_with(tmp_path, CODES + CHECK, n_items=2, raters=1)
    out = join(PIDS[0])
    assert prolific.answer_comprehension(out, "The photo quality") == "retry"
    assert prolific.answer_comprehension(out, "The photo quality") == "screened_out"
    assert prolific.answer_comprehension(out, "How similar two interactions are") == "screened_out"  # no third try
    end = prolific.outcome(out)
    assert end == prolific.Outcome("screened_out", "SCREENED",
                                   "https://app.prolific.com/submissions/complete?cc=SCREENED")
    ok = join(PIDS[1], 1)
    assert prolific.answer_comprehension(ok, "The photo quality") == "retry"
    assert prolific.answer_comprehension(ok, "How similar two interactions are") == "passed"
    with storage.read_session() as session:
        rows = {a.prolific_pid: (a.comprehension_failures, a.started_at is not None)
                for a in session.exec(select(Annotator))}
        kinds = [e.kind for e in session.exec(select(Event).where(Event.kind.like("comprehension%")
                                                                | (Event.kind == "screened_out")))]
    assert rows == {PIDS[0]: (2, False), PIDS[1]: (1, True)}
    assert kinds == ["comprehension_failed", "comprehension_failed", "screened_out", "comprehension_failed",
                     "comprehension_passed"]
    assert claims(study)[0] == []                               # the screened-out one claimed nothing
    assert {a["status"] for a in studies.progress(study)["annotators"]} == {"screened out", "rating"}
    from studyapp.platform.records.exports import study_tables
    with storage.read_session() as session:
        slug = session.get(studies.Study, study).slug
    table = study_tables(slug)["annotators.csv"].set_index("prolific_pid")
    assert table.loc[PIDS[0], ["outcome", "code_shown"]].tolist() == ["screened out", "SCREENED"]
    assert table.loc[PIDS[1], "outcome"] == "rating" and pd.isna(table.loc[PIDS[1], "code_shown"])


def test_failed_attention_checks_get_their_own_code(tmp_path):
    study = study_with(tmp_path, CODES + "[quality]\nattention_checks = 2\n", n_items=4, raters=2)
    expected = {}
    with storage.read_session() as session:
        for item in session.exec(select(Item).where(Item.study_id == study, Item.role == "attention")):
            expected[item.item_key] = item.expected
    results = {}
    for k, (pid, wrong) in enumerate([(PIDS[0], 2), (PIDS[1], 1)]):
        who = join(pid, k)
        assignment.accept_instructions(who)
        failed = 0
        while (task := assignment.next_item(who)) is not None:
            answer = 2
            if task.phase == "attention":
                good = int(expected[task.item_key])
                answer = (good + 2) % 5 if failed < wrong else good
                failed += answer != good
            assignment.submit(who, task.assignment_id, answer, 1.0)
        assert failed == wrong
        results[pid] = prolific.outcome(who)
    assert results[PIDS[0]] == prolific.Outcome("attention_failed", "ATTNFAIL",
                                                "https://app.prolific.com/submissions/complete?cc=ATTNFAIL")
    assert results[PIDS[1]] == prolific.Outcome("completed", "C0MPLETE",
                                                "https://app.prolific.com/submissions/complete?cc=C0MPLETE")
    # annotators.csv says the same: the attention failure is not "completed", with the code shown
    from studyapp.platform.records.exports import study_tables
    with storage.read_session() as session:
        slug = session.get(studies.Study, study).slug
    table = study_tables(slug)["annotators.csv"].set_index("prolific_pid")
    assert table.loc[PIDS[0], ["status", "outcome", "code_shown"]].tolist() == ["attention failed", "attention failed",
                                                                             "ATTNFAIL"]
    assert table.loc[PIDS[1], ["status", "outcome", "code_shown"]].tolist() == ["completed", "completed", "C0MPLETE"]


def prolific_export(path, rows):
    """A file in the layout of Prolific's submissions export."""
    header = ("Submission id,Participant id,Status,Custom study tncs accepted at,Started at,Completed at,"
              "Reviewed at,Archived at,Time taken,Completion code,Total approvals")
    lines = [header] + [f"65a{k:021d},{pid},{status},Not Applicable,2026-11-25T10:0{k}:00.000Z,,,,,,12"
                        for k, (pid, status) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def cli(*args):
    return subprocess.run([sys.executable, "-m", "studyapp", *args], cwd=ROOT, env=dict(os.environ),
                          capture_output=True, text=True)


def test_prolific_status_command_reads_prolifics_export(tmp_path):
    study = study_with(tmp_path, 'order = "fixed"\n' + CODES, n_items=2, raters=1, per_annotator=1)
    who = [join(pid, k) for k, pid in enumerate(PIDS[:3])]
    for w in who:
        assignment.accept_instructions(w)
    assignment.next_item(who[0])                                       # i01 left open
    bad = prolific_export(tmp_path / "bad.csv", [(PIDS[0], "RETURNED"), (PIDS[1], "GONE")])
    refused = cli("prolific-status", "t", "--csv", str(bad))
    assert refused.returncode == 2
    assert refused.stderr.strip() == (f"error: {bad}: line 3: status 'GONE' is not one of Prolific's (ACTIVE, "
                                      "AWAITING REVIEW, APPROVED, REJECTED, RETURNED, TIMED-OUT, SCREENED OUT, "
                                      "PARTIALLY APPROVED)")
    assert claims(study)[1] == {"i01": 1, "i02": 0}                     # nothing changed
    export = prolific_export(tmp_path / "prolific_export.csv", [
        (PIDS[0], "RETURNED"), (PIDS[1], "AWAITING REVIEW"), (PIDS[2], "REJECTED"),
        ("5f8a1b2c3d4e5f6a7b8c9dee", "TIMED-OUT")])
    done = cli("prolific-status", "t", "--csv", str(export))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == ("3 status(es) changed, 0 unchanged, 1 participant(s) never opened "
                                            "this study (5f8a1b2c3d4e5f6a7b8c9dee)")
    assert done.stdout.splitlines()[0].endswith("no status -> RETURNED, 1 unanswered item(s) back in the pool")
    assert claims(study)[1] == {"i01": 0, "i02": 0}
    one = cli("prolific-status", "t", "--pid", PIDS[1], "--status", "approved")
    assert one.returncode == 0 and "AWAITING REVIEW -> APPROVED" in one.stdout
    with storage.read_session() as session:
        stored = dict(session.exec(select(Annotator.prolific_pid, Annotator.prolific_status)).all())
        audit = session.exec(select(Event).where(Event.kind == "prolific_statuses")).all()
    assert stored == {PIDS[0]: "RETURNED", PIDS[1]: "APPROVED", PIDS[2]: "REJECTED"}
    assert [(e.actor, e.study_id) for e in audit] == [("cli", study), ("cli", study)]
    assert cli("prolific-status", "t").stderr.strip().startswith("error: give either --csv FILE")


def test_console_shows_returns_and_time_outs(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw-console-1")
    study = study_with(tmp_path, CODES + CHECK, n_items=2, raters=1)
    for k, pid in enumerate(PIDS[:3]):
        join(pid, k)
    prolific.answer_comprehension(join(PIDS[2], 2), "The photo quality")
    prolific.answer_comprehension(join(PIDS[2], 2), "The photo quality")
    prolific.apply_statuses(study, [(PIDS[0], "RETURNED"), (PIDS[1], "TIMED-OUT")])
    at = console_page("pw-console-1", tab="Progress")   # only the open tab runs
    lines = [m.value for m in at.markdown if m.value.startswith("**Prolific**")]
    assert lines == ["**Prolific** — returned: 1, screened out: 1, timed out: 1"]
    statuses = sorted(row for row in at.dataframe[0].value["status"])
    assert statuses == ["returned", "screened out", "timed out"]


# ------------------------------------------------------------------------ who Prolific says
def rate_all(annotator_id: int, value: int) -> int:
    """Answer every item handed out; returns how many."""
    n = 0
    while (task := assignment.next_item(annotator_id)) is not None:
        assignment.submit(annotator_id, task.assignment_id, value + n % 2, 1.0)
        n += 1
    return n


def test_headline_counts_separate_raters_from_arrivals_and_match_dashboard_and_prolific(tmp_path, capsys):
    """Two participants rate, one is screened out, one arrives and rates nothing, one returns;
    and a crafted link (a script for a PID) is refused: the headline says 2 rated, 5 arrived,
    1 screened out, 1 returned, as the dashboard's agreement (2 raters) and Prolific's counts do."""
    study = study_with(tmp_path, CODES + CHECK, n_items=4, raters=3)
    pids = PIDS + ["5f8a1b2c3d4e5f6a7b8c9d05"]
    for k in (0, 1):
        who = join(pids[k], k)
        assert prolific.answer_comprehension(who, "How similar two interactions are") == "passed"
        assert rate_all(who, 2 + k) == 4
    for _ in range(2):
        prolific.answer_comprehension(join(pids[2], 2), "The photo quality")
    join(pids[3], 3)
    join(pids[4], 4)
    prolific.apply_statuses(study, [(pids[4], "RETURNED")])
    with pytest.raises(InputError, match="not valid"):
        assignment.join_prolific("t", "<script>alert(1)</script>", "64a1b2c3d4e5f6a7b8c9d0e1", "0" * 24)
    p = studies.progress(study)
    counts = studies.headline_counts(p)
    assert {k: counts[k] for k in ("rated at least once", "arrived", "screened out", "returned")} == {
        "rated at least once": 2, "arrived": 5, "screened out": 1, "returned": 1}
    assert prolific.summary(study) == {"screened out": 1, "returned": 1, "no status yet": 3}
    from studyapp.platform.reporting.dashboard import study_dashboard
    assert study_dashboard("t").agreement["n_annotators"] == counts["rated at least once"]
    assert cli_main(["status", "t"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "annotators: rated at least once: 2, arrived: 5, screened out: 1, returned: 1, completed: 2"
    assert out[2] == "Prolific: no status yet: 3, returned: 1, screened out: 1"


MALFORMED_SEEDS = ("5f8a1b2c3d4e5f6a7b8c9d01", "<script>alert(1)</script>", "PID123")


def malformed_ids(n: int, seed: int = 0) -> list[str]:
    """``n`` strings that are not Prolific ids, made by the fuzzing harness's byte-level mutation
    of a valid id (and of two crafted ones), decoded as a browser would send them."""
    import random

    from benchmarks.fuzz_inputs import mutated_bytes

    rng, found = random.Random(seed), []
    while len(found) < n:
        text = mutated_bytes(rng, rng.choice(MALFORMED_SEEDS).encode()).decode("utf-8", "replace")
        if not prolific.PROLIFIC_ID.fullmatch(text) and text.strip():
            found.append(text)
    return found


def test_a_malformed_prolific_id_creates_no_row(tmp_path):
    """400 mutated PIDs (and as many STUDY_IDs and SESSION_IDs) are refused with the polite page's
    text, and not one annotator or event row is written; a valid id then joins."""
    study_with(tmp_path, CODES, n_items=2, raters=1)
    valid = ("5f8a1b2c3d4e5f6a7b8c9d01", "64a1b2c3d4e5f6a7b8c9d0e1", "65b2c3d4e5f6a7b8c9d0e1f2")
    with storage.read_session() as session:
        events_before = len(session.exec(select(Event)).all())
    for k, bad in enumerate(malformed_ids(400)):
        ids = list(valid)
        ids[k % 3] = bad
        with pytest.raises(InputError) as refused:
            assignment.join_prolific("t", *ids)
        assert str(refused.value) == prolific.NOT_JOINABLE, bad
    with storage.read_session() as session:
        assert session.exec(select(Annotator)).all() == []
        assert len(session.exec(select(Event)).all()) == events_before
    assert assignment.join_prolific("t", *valid).prolific_pid == valid[0]


def test_an_upper_cased_prolific_id_is_the_same_participant(tmp_path):
    # Prolific's ids are hexadecimal: a returning participant whose link was upper-cased (by a
    # mail client, by hand) resumes the same session instead of starting a new one
    study_with(tmp_path, CODES, n_items=2, raters=1)
    ids = ("5f8a1b2c3d4e5f6a7b8c9d01", "64a1b2c3d4e5f6a7b8c9d0e1", "65b2c3d4e5f6a7b8c9d0e1f2")
    first = assignment.join_prolific("t", *ids)
    again = assignment.join_prolific("t", ids[0].upper(), ids[1].upper(), ids[2])
    assert again.id == first.id and again.prolific_pid == ids[0]
    with storage.read_session() as session:
        assert len(session.exec(select(Annotator)).all()) == 1
    report = prolific.apply_statuses(first.study_id, [(ids[0].upper(), "RETURNED")])
    assert report.unknown == [] and len(report.changed) == 1
