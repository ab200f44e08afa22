"""The documentation cannot drift silently: in README.md and docs/**/*.md every
relative link and ``#anchor`` resolves (GitHub's heading slugs), every ``python -m metrics`` /
``python -m studyapp`` command, subcommand and option named exists in the command lines'
parsers, every ``python -m benchmarks.NAME`` is a benchmark module with the options named,
and every project path in backticks (``metrics/...``, ``tests/x.py::test_name``) exists."""

from __future__ import annotations

import argparse
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from projectpaths import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`([^`]+)`")
PROJECT_DIRS = ("metrics", "studyapp", "tests", "benchmarks", "scripts", "studies", "docs", ".ci")


def split_markdown(text: str) -> tuple[str, list[str]]:
    """(the text outside fenced code blocks, the lines inside them)."""
    prose, code, inside = [], [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            inside = not inside
            prose.append("")
            continue
        (code if inside else prose).append(line)
    return "\n".join(prose), code


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text lower-cased, punctuation and symbols
    dropped (letters, digits, ``_``, ``-`` and spaces kept), spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link: its text
    text = text.replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    prose, _ = split_markdown(path.read_text(encoding="utf-8"))
    seen: Counter[str] = Counter()
    out = set()
    for line in prose.splitlines():
        if m := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line):
            slug = github_slug(m.group(1))
            out.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
            seen[slug] += 1
    return frozenset(out)


def test_the_docs_exist_and_the_readme_is_short():
    names = {p.relative_to(ROOT).as_posix() for p in DOCS}
    assert {"README.md", "docs/studies.md", "docs/metrics.md", "docs/matrices.md", "docs/method.md",
            "docs/operations.md"} <= names
    assert len((ROOT / "README.md").read_bytes()) <= 6 * 1024


def test_github_slug():
    assert github_slug("WordNet 3.0, offline") == "wordnet-30-offline"
    assert github_slug("Study type `hoi_similarity`: rating HOI pairs") == "study-type-hoi_similarity-rating-hoi-pairs"
    assert github_slug("imSitu: sense-aware accuracy") == "imsitu-sense-aware-accuracy"
    assert github_slug("The demo study and the annotator's flow") == "the-demo-study-and-the-annotators-flow"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_and_anchors_resolve(doc):
    prose, _ = split_markdown(doc.read_text(encoding="utf-8"))
    prose = INLINE_CODE.sub("", prose)
    broken = []
    for target in LINK.findall(prose):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):   # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with anchor #{anchor} in {file.relative_to(ROOT)}")
        elif anchor and file.suffix != ".md":
            broken.append(f"{target}: an anchor into a file that is not Markdown")
    assert not broken, "\n".join(broken)


# ----------------------------------------------------------------- commands named in the docs
def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@cache
def parsers() -> dict[str, argparse.ArgumentParser]:
    from metrics.cli import build_parser as metrics_parser
    from studyapp.platform.commands.cli import build_parser as studyapp_parser
    return {"metrics": metrics_parser("*"), "studyapp": studyapp_parser()}


def command_mentions() -> list[tuple[str, str, str]]:
    """(doc, program, the words after it) for every ``-m metrics ...`` / ``-m studyapp ...``
    in a code block (continuation lines joined) and every inline span naming one, also as
    ``metrics score`` / ``studyapp export``."""
    out = []
    for doc in DOCS:
        prose, code = split_markdown(doc.read_text(encoding="utf-8"))
        lines = "\n".join(code).replace("\\\n", " ").splitlines()
        spans = [s.replace("\n", " ") for s in INLINE_CODE.findall(prose)]
        name = doc.relative_to(ROOT).as_posix()
        for text in lines + spans:
            text = re.sub(r"\$\([^)]*\)", "", text.split(" #")[0])   # a shell comment, a $(...)
            for m in re.finditer(r"(?:-m |^)(metrics|studyapp) +([^;&]*)", text):
                out.append((name, m.group(1), m.group(2)))
    return out


def check_command(program: str, words: str) -> list[str]:
    parser = parsers()[program]
    tokens = [t.strip("[](){},.'\"") for t in words.split()]
    tokens = [t for t in tokens if t]
    problems, path = [], [program]
    chosen = parser
    for token in tokens:
        if token.startswith("-"):
            for option in re.findall(r"--?[a-z][a-z0-9-]*", token):
                if option not in chosen._option_string_actions:
                    problems.append(f"{' '.join(path)}: no option {option}")
            continue
        choices = subcommands(chosen)
        if not choices:
            continue                                  # an argument value
        if re.fullmatch(r"[a-z][a-z0-9-]*", token) and token in choices:
            chosen = choices[token]
            path.append(token)
        elif re.fullmatch(r"[a-z][a-z0-9-]*", token) and len(path) == 1:
            problems.append(f"{program}: no command {token!r}")
            break
        else:
            break                                     # a word standing for a value (COMMAND, ...): stop
    return problems


def test_every_command_and_option_named_in_the_docs_exists():
    mentions = command_mentions()
    named = {(program, words.split()[0]) for _, program, words in mentions if words.split()}
    assert ("metrics", "score") in named and ("studyapp", "export") in named   # the scan finds them
    problems = [f"{doc}: {p}" for doc, program, words in mentions for p in check_command(program, words)]
    assert not problems, "\n".join(sorted(set(problems)))


def test_every_metrics_command_is_documented():
    from metrics.cli import COMMANDS
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    missing = [name for name in COMMANDS if f"`{name}`" not in text and f"`{name} " not in text]
    assert not missing, f"docs/metrics.md names no {missing}"


def test_check_command_catches_drift():
    assert check_command("metrics", "score --gt g --pred p --map-protocol official") == []
    assert check_command("metrics", "matrix build-llm --config x --dry-run") == []
    assert check_command("studyapp", "matrices export NAME --out DIR") == []
    assert check_command("metrics", "scroe --gt g") == ["metrics: no command 'scroe'"]
    assert check_command("metrics", "score --no-such-option") == ["metrics score: no option --no-such-option"]


def test_benchmarks_named_in_the_docs_exist_with_their_options():
    problems = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8").replace("\\\n", " ")
        for m in re.finditer(r"-m benchmarks\.([A-Za-z_]+)([^`\n]*)", text):
            name, rest = m.groups()
            if name.isupper():                         # benchmarks.NAME
                continue
            module = ROOT / "benchmarks" / f"{name}.py"
            if not module.exists():
                problems.append(f"{doc.name}: no benchmark {name}")
                continue
            source = module.read_text(encoding="utf-8")
            for option in re.findall(r"(--[a-z][a-z0-9-]*)", rest.split("|")[0]):
                if f'"{option}"' not in source:
                    problems.append(f"{doc.name}: benchmarks.{name} has no option {option}")
    assert not problems, "\n".join(problems)


def test_project_paths_in_backticks_exist():
    problems = []
    for doc in DOCS:
        prose, code = split_markdown(doc.read_text(encoding="utf-8"))
        for span in INLINE_CODE.findall(prose):
            span = span.strip()
            if not re.fullmatch(rf"(?:{'|'.join(map(re.escape, PROJECT_DIRS))})/[\w./-]+(?:::\w+)?", span):
                continue
            path, _, test = span.partition("::")
            if not (ROOT / path).exists():
                problems.append(f"{doc.name}: no {path}")
            elif test and not re.search(rf"^def {re.escape(test)}\(", (ROOT / path).read_text(encoding="utf-8"), re.M):
                problems.append(f"{doc.name}: no test {test} in {path}")
    assert not problems, "\n".join(problems)


def sampling_table() -> dict[str, list[int]]:
    """The hoi_similarity guide's `studyapp sample --n 500 --seed 0` table: row label -> counts."""
    text = (ROOT / "docs" / "study-types" / "hoi_similarity.md").read_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.match(r"^[123][ ,(]", cells[0]):
            rows[cells[0]] = [int(re.match(r"\d+", c).group()) for c in cells[1:] if re.match(r"\d+", c)]
    return rows


def test_the_sampling_table_is_what_the_sampler_draws(shared_data):
    from metrics.study._shoe_pool import read_shoe_csv
    from studyapp.studytypes.hoi_similarity.sampler import sample_pairs, sample_pool

    rows = sampling_table()
    assert len(rows) == 6
    for items, pool in ((sample_pairs(500, 0)[0], False),
                        (sample_pool(read_shoe_csv(shared_data / "shoe" / "shoe_candidate_pairs.csv"), 500, 0)[0], True)):
        counts = items.groupby(["category", "level"]).size()
        assert len(items) == 500
        for category in (1, 2, 3):
            label = next(k for k in rows if k.startswith(str(category)) and ("--pool" in k) == pool)
            documented = [n for n in rows[label]]
            drawn = [int(counts.get((category, level), 0)) for level in range(1, 5 if category < 3 else 4)]
            assert [n for n in drawn if n] == [n for n in documented if n], label
