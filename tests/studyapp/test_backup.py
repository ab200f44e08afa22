"""Backup / restore round trips (SQLite->SQLite, PostgreSQL->PostgreSQL, SQLite->PostgreSQL),
the refusals, and the health check."""

import json
import zipfile

import pytest
from sqlalchemy import MetaData, create_engine, select
from studyhelpers import make_annotators, make_study

from metrics import InputError
from studyapp.core import migrations, storage
from studyapp.platform import assignment
from studyapp.platform.commands import cli
from studyapp.platform.operations import backup


def _dump(url: str) -> dict[str, list[dict]]:
    """Every table's rows as the backup writes them (times normalized to UTC ISO)."""
    engine = create_engine(url)
    md = MetaData()
    with engine.connect() as conn:
        md.reflect(conn)
        out = {t.name: [{k: backup._json_value(v) for k, v in r.items()}
                        for r in conn.execute(select(t).order_by(*t.primary_key.columns)).mappings()]
               for t in md.sorted_tables}
    engine.dispose()
    return out


def _fill(tmp_path) -> tuple[int, list[int], dict]:
    """A study with 3 annotators: one finished, one mid-way with a revised answer, one new.
    Returns the study id, the annotator ids and the responses given (assignment -> answers)."""
    study = make_study(tmp_path, n_items=4, raters=2, extra='order = "fixed"')
    done, midway, fresh = make_annotators(study, 3)
    given = {}
    while (task := assignment.next_item(done)) is not None:
        assignment.submit(done, task.assignment_id, 3, 1.5)
        given[task.assignment_id] = ["3"]
    first = assignment.next_item(midway)
    assignment.submit(midway, first.assignment_id, 1, 2.25)
    assignment.submit(midway, first.assignment_id, 4, 0.5, revise=True)  # back-and-change: a revision
    given[first.assignment_id] = ["1", "4"]
    second = assignment.next_item(midway)  # claimed, not answered: the resume point
    return study, [done, midway, fresh], {"given": given, "pending": second}


def _check_restored(url, source_dump, ids, facts):
    assert _dump(url) == source_dump
    storage.dispose_all()
    engine = storage.get_engine(url)
    done, midway, fresh = ids
    # the restored database works on: the annotator resumes at the claimed item ...
    again = assignment.next_item(midway, engine=engine)
    assert (again.assignment_id, again.item_key) == (facts["pending"].assignment_id,
                                                     facts["pending"].item_key)
    # ... and new rows get fresh ids (PostgreSQL sequences were moved past the restored ids)
    rating = assignment.submit(midway, again.assignment_id, 2, 1.0, engine=engine)
    assert rating.id == max(r["id"] for r in source_dump["rating"]) + 1
    task = assignment.next_item(fresh, engine=engine)
    assert task.assignment_id == max(r["id"] for r in source_dump["assignment"]) + 1


def _responses(dump) -> dict[int, list[str]]:
    out = {}
    for r in sorted(dump["rating"], key=lambda r: (r["assignment_id"], r["revision"])):
        out.setdefault(r["assignment_id"], []).append(r["response"])
    return out


def test_round_trip_on_the_same_backend(tmp_path, fresh_db):
    _study, ids, facts = _fill(tmp_path)
    source = storage.get_engine().url.render_as_string(hide_password=False)
    source_dump = _dump(source)
    assert _responses(source_dump) == facts["given"]  # 4 + 2 rating rows, known in advance
    path = tmp_path / "b" / "backup.zip"
    manifest = backup.backup(path, source)
    assert manifest["schema_version"] == migrations.LATEST
    assert manifest["tables"]["rating"]["rows"] == 6
    assert manifest["tables"]["study"]["rows"] == 1 and manifest["tables"]["annotator"]["rows"] == 3
    target = fresh_db()
    backup.restore(path, target)
    _check_restored(target, source_dump, ids, facts)


def test_sqlite_backup_restores_into_postgresql(tmp_path):
    from dbhelpers import postgres_schema, postgres_url_or_skip
    pg_url = postgres_url_or_skip()
    sqlite_url = storage.get_engine().url.render_as_string()  # the test's SQLite file
    _study, ids, facts = _fill(tmp_path)
    source_dump = _dump(sqlite_url)
    path = tmp_path / "backup.zip"
    assert backup.backup(path, sqlite_url)["dialect"] == "sqlite"
    with postgres_schema(pg_url) as target:
        backup.restore(path, target)
        _check_restored(target, source_dump, ids, facts)


def test_restore_refuses_a_database_with_rows_and_changes_nothing(tmp_path, db_backend):
    _fill(tmp_path)
    url = storage.get_engine().url.render_as_string(hide_password=False)
    path = tmp_path / "backup.zip"
    backup.backup(path, url)
    before = _dump(url)
    with pytest.raises(InputError, match="not empty"):
        backup.restore(path, url)
    assert _dump(url) == before


def test_damaged_backups_are_refused_with_one_line(tmp_path, fresh_db):
    _fill(tmp_path)
    url = storage.get_engine().url.render_as_string(hide_password=False)
    good = tmp_path / "good.zip"
    backup.backup(good, url)
    with zipfile.ZipFile(good) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}

    def variant(name, **replace):
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as zf:
            for member, data in {**members, **replace}.items():
                if data is not None:
                    zf.writestr(member, data)
        return path

    lines = members["tables/rating.jsonl"].decode().splitlines(keepends=True)
    manifest = json.loads(members["manifest.json"])
    cases = {
        "not a zip file": (tmp_path / "plain.zip", "not a zip file"),
        "no manifest": (variant("nomanifest.zip", **{"manifest.json": None}), "no manifest.json"),
        "bad manifest": (variant("badmanifest.zip", **{"manifest.json": b"{oops"}), "manifest.json: line 1 column 2: invalid JSON"),
        "newer schema": (variant("newer.zip", **{"manifest.json": json.dumps(
            {**manifest, "schema_version": migrations.LATEST + 1})}), "schema version"),
        "missing table": (variant("notable.zip", **{"tables/rating.jsonl": None}), "rating.jsonl is missing"),
        "truncated": (variant("truncated.zip", **{"tables/rating.jsonl": "".join(lines[:-1])}),
                      "does not match the manifest"),
        "invalid line": (variant("invalid.zip", **{"tables/rating.jsonl": "".join(lines[:2]) + "{x\n"}),
                         "rating.jsonl: line 3 column 2: invalid JSON"),
    }
    (tmp_path / "plain.zip").write_text("hello")
    target = fresh_db()
    for label, (path, message) in cases.items():
        with pytest.raises(InputError, match=message):
            backup.restore(path, target)
        # all or nothing: the target stays empty after every refusal
        engine = create_engine(target)
        with engine.connect() as conn:
            version = migrations.current_version(conn)
            if version:
                from sqlalchemy import text
                assert conn.execute(text("SELECT COUNT(*) FROM rating")).scalar() == 0, label
        engine.dispose()
    backup.restore(good, target)  # the good one still restores afterwards
    assert len(_dump(target)["rating"]) == len(lines)


def test_cli_backup_restore_and_health(tmp_path, fresh_db, capsys):
    _fill(tmp_path)
    path = tmp_path / "cli.zip"
    assert cli.main(["health"]) == 0
    assert capsys.readouterr().out.startswith("ok: ")
    assert cli.main(["backup", str(path)]) == 0
    assert "6 ratings" in capsys.readouterr().out
    target = fresh_db()
    assert cli.main(["restore", str(path), "--url", target]) == 0
    assert "restored" in capsys.readouterr().out
    assert cli.main(["restore", str(path), "--url", target]) == 2  # not empty any more
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "not empty" in err and err.count("\n") == 1
    assert cli.main(["health", "--url", target]) == 0


def test_health_reports_an_unreachable_or_old_database(tmp_path, capsys):
    bad = "postgresql+psycopg://nobody:x@127.0.0.1:1/none?connect_timeout=2"
    assert cli.main(["health", "--url", bad]) == 1
    out = capsys.readouterr().out
    assert out.startswith("unhealthy: ") and "not reachable" in out and out.count("\n") == 1
    old = f"sqlite:///{tmp_path / 'old.sqlite'}"
    engine = create_engine(old)
    with engine.begin() as conn:
        migrations.upgrade(conn, target=1)
    engine.dispose()
    assert cli.main(["health", "--url", old]) == 1
    assert "schema version 1" in capsys.readouterr().out
