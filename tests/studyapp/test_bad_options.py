"""Every option of every command, given a bad value: generated from the parsers themselves.

For each command (``COMMANDS`` in ``faults.py`` holds a valid command line of each) and each of
its options, the values a careless or hostile user gives are tried: for a number zero,
negative, NaN, infinite, huge, a fraction where a whole number is needed and text; for an
input file a folder and a missing path; for an output file a folder, a path under a file, an
unwritable folder and a device; for an output folder a file, a path under a file and an
unwritable folder. A value inside the option's range is left out (it is not bad). Each case
must end with exit status 2, one line on stderr naming the option, and nothing written or
changed (every file under the test's folder and every database row)."""

from __future__ import annotations

import argparse
import functools
import math
from pathlib import Path

import pytest
from faults import (  # noqa: F401 (fixtures)
    COMMANDS,
    Refusal,
    check_refused,
    expand,
    option_name,
    parsers,
    run_in_process,
    run_process,
    state,
    unlock,
    unwritable_folder,
    value_actions,
    with_value,
    world,
    world_template,
)

from metrics.core import _options as options

NUMBERS = {"zero": "0", "negative": "-1", "nan": "nan", "infinite": "inf", "huge": "1e400",
           "huge-integer": "9" * 30, "fraction": "1.5", "text": "many"}
PATHS = {
    options.input_file: {"a-folder": ("{a_folder}", "is a folder"), "missing": ("{w}/nope.txt", "no such file")},
    options.input_path: {"missing": ("{w}/nope", "no such file")},
    options.output_file: {"a-folder": ("{a_folder}", "is a folder"),
                          "under-a-file": ("{a_file.txt}/x.out", "is a file, not a folder"),
                          "unwritable": ("{locked}/x.out", "cannot write"),
                          "a-device": ("/dev/full", "not a regular file")},
    options.output_dir: {"a-file": ("{a_file.txt}", "not a folder"),
                         "under-a-file": ("{a_file.txt}/sub", "is a file, not a folder"),
                         "unwritable": ("{locked}/sub", "cannot write")},
}
# options that take free text (names, URLs, labels, expressions) and are checked by the command
FREE_TEXT = {"--url", "--address", "--study", "--name", "--label", "--annotators-of", "--judge", "--metric",
             "--base-url", "--model", "--released-name", "--profiles", "--verb", "--gt-verb", "--object", "--gt-object",
             "--strata", "--compare", "--based-on", "--owner", "--pid", "--status", "study", "studies", "pseudonym", "target", "name",
             "account", "a", "b"}


@functools.cache
def command_parsers() -> dict:
    """Each command's parser, built once: the tests only read them (the commands build their own)."""
    return {command: parser for command, _module, parser in parsers()}


def in_range(parse, text: str) -> bool:
    try:
        parse(text)
        return True
    except argparse.ArgumentTypeError:
        return False


def cases():
    out = []
    for command, module, parser in parsers():
        if command not in COMMANDS:
            continue
        for action in value_actions(parser):
            name = option_name(action)
            kind = action.type
            if hasattr(kind, "item"):  # comma_list: each value of the list
                kind = kind.item
            if hasattr(kind, "range"):
                for label, text in NUMBERS.items():
                    if not in_range(kind, text):
                        out.append(pytest.param(command, module, name, text, [name],
                                                id=f"{command}-{name}-{label}"))
            for label, (text, expect) in PATHS.get(action.type, {}).items():
                out.append(pytest.param(command, module, name, text, [name if action.option_strings else "",
                                                                      expect],
                                        id=f"{command}-{name}-{label}"))
    return out


CASES = cases()


def test_every_command_has_a_valid_command_line_in_the_table():
    assert {c for c, _m, _p in parsers()} == set(COMMANDS)


def test_every_option_has_a_range_or_a_role_or_is_free_text():
    """A new numeric or path option without a checked type fails here."""
    loose = []
    for command, _module, parser in parsers():
        for action in value_actions(parser):
            if action.type in (int, float) or (action.type is None and action.choices is None
                                               and option_name(action) not in FREE_TEXT):
                loose.append(f"{command} {option_name(action)}")
    assert not loose, f"options without a checked type: {loose}"


def test_the_table_is_large():
    per_command = {}
    for case in CASES:
        per_command[case.values[0]] = per_command.get(case.values[0], 0) + 1
    assert len(CASES) >= 500
    # these take only free text (a slug, a pseudonym, a URL) or nothing: test_bad_files.py has them
    assert set(COMMANDS) - set(per_command) == {"status", "revoke", "owner", "share", "list", "reset-admin-password", "health",
                                                "check-images", "matrices list", "matrices compare",
                                                "account add", "account list", "account set-password",
                                                "studyapp plugins"}


@pytest.fixture
def locked(world):
    folder = unwritable_folder(Path(world["w"]))
    world["locked"] = str(folder) if folder else None
    yield folder
    unlock(folder)


@pytest.mark.parametrize("command,module,option,value,expect", CASES)
def test_a_bad_option_value_is_refused_and_nothing_is_written(world, locked, capsys, command, module, option,
                                                              value, expect):
    if "{locked}" in value and locked is None:
        pytest.skip("this system cannot make an unwritable folder")
    base_module, base = COMMANDS[command]
    parser = command_parsers()[command]
    action = next(a for a in value_actions(parser) if option_name(a) == option)
    argv = expand(with_value(base, command, parser, action, value), world)
    before = state(Path(world["w"]))
    status, out, err = run_in_process(base_module, argv, capsys)
    line = check_refused(status, out, err, Refusal([e for e in expect if e]), " ".join(argv[:3]))
    if action.option_strings:
        assert f"argument {option}" in line or option in line
    assert state(Path(world["w"])) == before, f"{command} {option} {value}: something was written or changed"


@pytest.mark.parametrize("command,option,value", [
    ("imsitu-cluster", "--n-jobs", "0"), ("matrix build-llm", "--batch-size", "0"),
    ("simulate", "--noise", "nan"), ("score", "--json", "/dev/full"), ("agreement", "--out", "{a_file.txt}/r"),
])
def test_real_processes_refuse_the_same_way(world, command, option, value):
    module, base = COMMANDS[command]
    parser = command_parsers()[command]
    action = next(a for a in value_actions(parser) if option_name(a) == option)
    argv = expand(with_value(base, command, parser, action, value), world)
    before = state(Path(world["w"]))
    status, out, err = run_process(module, argv, {"STUDYAPP_DB": world["studyapp.sqlite"]})
    check_refused(status, out, err, Refusal([option]), command)
    assert state(Path(world["w"])) == before


def test_numbers_at_the_ends_of_a_range_are_taken():
    assert options.integer(1, 8)("8") == 8 and options.number(0, 1)("0") == 0.0
    for bad in ("0", "9", "nan", "1e999", "2.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            options.integer(1, 8)(bad)
    assert math.isclose(options.number(0, 1, low_open=True)("1e-9"), 1e-9)


@pytest.fixture(scope="module")
def demo_created(tmp_path_factory):
    """`create studies/demo.toml` run once as a process on a new database: (its result, the database)."""
    import os
    import subprocess
    import sys

    from projectpaths import ROOT
    database = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    env = {**os.environ, "STUDYAPP_DB": str(database)}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-m", "studyapp", "create", "studies/demo.toml"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    return done, database


def demo_database(demo_created, tmp_path, monkeypatch) -> Path:
    """A copy of the database holding the demo study (with SQLite's log, if any), made the
    test's STUDYAPP_DB."""
    import shutil
    copy = tmp_path / "demo.sqlite"
    for suffix in ("", "-wal"):
        if Path(f"{demo_created[1]}{suffix}").exists():
            shutil.copyfile(f"{demo_created[1]}{suffix}", f"{copy}{suffix}")
    monkeypatch.setenv("STUDYAPP_DB", str(copy))
    return copy


def test_create_of_an_existing_study_refuses_before_printing_its_sampling_table(demo_created, tmp_path,
                                                                                monkeypatch):
    """`./run.sh` creates the demo; `create studies/demo.toml` again printed the whole sampling
    table, then 'already exists'. Now the refusal comes alone."""
    import os
    import subprocess
    import sys

    from projectpaths import ROOT
    first, _database = demo_created
    assert first.returncode == 0 and "category" in first.stdout       # the table, once created
    env = {**os.environ, "STUDYAPP_DB": str(demo_database(demo_created, tmp_path, monkeypatch))}
    again = subprocess.run([sys.executable, "-m", "studyapp", "create", "studies/demo.toml"], cwd=ROOT, env=env,
                           capture_output=True, text=True)
    assert again.returncode == 2 and again.stdout == ""
    assert len(again.stderr.strip().splitlines()) == 1 and "already exists" in again.stderr


def test_create_checks_the_slug_before_the_items(demo_created, tmp_path, monkeypatch, capsys):
    """A taken slug is refused before the spec's items are read or sampled: with the study
    already there, a spec whose items file is missing still gets the slug's refusal."""
    from projectpaths import ROOT
    first, _database = demo_created
    assert first.returncode == 0, first.stderr
    demo_database(demo_created, tmp_path, monkeypatch)
    spec = (ROOT / "studies" / "demo.toml").read_text().replace('source = "sampler"', 'source = "missing.csv"')
    (tmp_path / "demo.toml").write_text(spec)
    status, _out, err = run_in_process("studyapp", ["create", str(tmp_path / "demo.toml")], capsys)
    assert status == 2 and "a study named 'demo' already exists" in err, err
