"""Untrusted text (spec, items CSV, URL, annotator) is rendered inert on every page.

Payloads with ``<script>``, raw HTML, Markdown links / images and bare URLs go through the
study title, instructions, scale labels, the example's explanation, item labels from the CSV,
pseudonyms, the completion code and URL parameters. Every rendered element is inspected in its
protobuf: no element allows HTML, and every Markdown-rendering text that carries a payload has
each ``<``, ``[``, `` ` `` and ``!`` backslash-escaped and no bare ``https://``, ``www.`` or
e-mail address that GFM would turn into a link.
"""

import re

import pytest
from projectpaths import ROOT
from streamlit.testing.v1 import AppTest
from studyhelpers import console_page, open_tab
from test_pages import answer_bar, press, screen_components

from studyapp.core import safe_markdown
from studyapp.platform import assignment
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

APP = str(ROOT / "studyapp" / "views" / "app.py")
MARK = "evilmark"
PAYLOADS = [
    f"<script>alert('{MARK}')</script>",
    f"<img src=x onerror=alert(1)><b>{MARK}</b>",
    f"[click {MARK}](https://{MARK}.example/x)",
    f"![pic](https://{MARK}.example/p.png) https://{MARK}.example/bare",
    f"www.{MARK}.example and me@{MARK}.example <a href='javascript:alert(1)'>{MARK}</a>",
]
PAYLOAD = " ".join(PAYLOADS)
# element types whose text is not Markdown (shown literally by the frontend)
LITERAL = {"code", "text", "dataframe", "arrow_data_frame", "json", "table", "arrow_table"}
# fields shown as plain text (selectbox / multiselect options are not Markdown, unlike radio's)
LITERAL_FIELDS = {("selectbox", "options"), ("multiselect", "options"), ("selectbox", "raw_value"),
                  ("selectbox", "default"), ("text_input", "value"), ("text_area", "value"),
                  ("bidi_component", "json")}  # the answer bar sets its labels as textContent


CODE_SPAN = r"(`+)(?!`)(.+?)(?<!`)\1(?!`)"


def _unescaped(body: str) -> str:
    """``body`` with backslash-escaped characters removed (what Markdown could still parse)."""
    return re.sub(r"\\[!-/:-@\[-`{-~]", "", body)


def inert_problems(body: str) -> list[str]:
    problems = []
    live = re.sub(CODE_SPAN, "", _unescaped(body))  # code spans are inert
    for char in "<[`!":
        if char in live:
            problems.append(f"unescaped {char!r}")
    # what the text shows once escapes are resolved (outside code spans)
    plain = re.sub(CODE_SPAN, "", body.replace("\\`", "")).replace("\\", "")
    if re.search(r"https?://", plain, re.IGNORECASE):
        problems.append("bare URL")
    if re.search(r"www\.", plain, re.IGNORECASE):
        problems.append("bare www. domain")
    if re.search(r"[\w.+-]@[\w-]", plain):
        problems.append("bare e-mail address")
    return problems


def walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from walk(child)


def check_page(at: AppTest) -> int:
    """Assert every payload-carrying text is inert; returns how many such texts were seen."""
    assert not at.exception, at.exception
    seen = 0
    for root in (at.main, at.sidebar):
        for node in walk(root):
            proto = getattr(node, "proto", None)
            if proto is None or not hasattr(proto, "DESCRIPTOR"):
                continue
            names = {f.name for f in proto.DESCRIPTOR.fields}
            if "allow_html" in names:
                assert not proto.allow_html, f"{node.type} allows HTML"
            if node.type in LITERAL:
                continue
            texts = []
            for field in proto.DESCRIPTOR.fields:
                if field.type != field.TYPE_STRING or (node.type, field.name) in LITERAL_FIELDS:
                    continue
                value = getattr(proto, field.name)
                texts.extend([value] if isinstance(value, str) else list(value))
            for value in texts:
                if MARK in value.replace("\\", "").replace(safe_markdown.WORD_JOINER, ""):
                    seen += 1
                    assert inert_problems(value) == [], (node.type, value)
    return seen


SCREEN_TAGS = {"div", "span", "p", "strong", "em", "code", "h3", "figure", "figcaption", "img",
               "boxes-toggle"}  # the tags common.js builds; anything else throws there


def check_screen(at: AppTest) -> int:
    """The item screen's payload: text only as strings, which the page sets as text;
    only the tags common.js knows, only class / alt / width / data:image src attributes.
    Returns how many payload-carrying strings it holds (progress, notices, content)."""
    if not screen_components(at):
        return 0
    data = answer_bar(at)
    screen = data.get("screen") or {}
    seen = []

    def walk(node):
        if isinstance(node, str):
            seen.append(node)
            return
        tag, attrs, *children = node
        assert tag in SCREEN_TAGS, tag
        assert set(attrs) <= {"class", "alt", "width", "src"}, attrs
        if "src" in attrs:
            assert tag == "img" and attrs["src"].startswith("data:image/png;base64,")
        for child in children:
            walk(child)
    for node in screen.get("content", []):
        walk(node)
    seen += [text for _kind, text in screen.get("notices", [])]
    seen.append(screen.get("progress", {}).get("text", ""))
    return sum(MARK in text for text in seen)


@pytest.fixture
def payload_study(tmp_path):
    (tmp_path / "items.csv").write_text(
        "item_id,gt_verb,gt_object,pred_verb,pred_object,gt_verb_label,gt_object_label\n"
        f'i1,ride,bicycle,push,bicycle,"{PAYLOADS[0]}","{PAYLOADS[2]}"\n'
        f'i2,hold,cup,carry,cup,"{PAYLOADS[1]}","{PAYLOADS[3]}"\n'
        f'i3,ride,horse,walk,horse,"{PAYLOADS[4]}","{PAYLOADS[2]}"\n', encoding="utf-8")
    toml_labels = "[" + ", ".join(repr(f"{k} {p}") for k, p in enumerate(PAYLOADS)) + "]"
    spec = tmp_path / "x.toml"
    spec.write_text(f'''title = {PAYLOAD!r}
study_type = "hoi_similarity"
instructions = """
**Bold** stays, lists stay:

- one
- {PAYLOADS[0]}

| a | b |
| --- | --- |
| {PAYLOADS[2].replace("|", "")} | {PAYLOADS[3]} |

{PAYLOAD}
"""
raters_per_item = 1
items_per_annotator = "all"
order = "fixed"
access_code = "code"

[scale]
values = [0, 1, 2, 3, 4]
labels = {toml_labels}

[items]
source = "csv"
path = "items.csv"

[prolific]
completion_code = {PAYLOADS[2]!r}

[example]
gt_verb = "ride"
gt_object = "bicycle"
pred_verb = "push.v.01"
pred_object = "bicycle"
gt_verb_label = {PAYLOADS[4]!r}
rating = 1
explanation = {PAYLOAD!r}
''', encoding="utf-8")
    return studies.create_study(load_spec(spec))


def open_app(page: str | None = None, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    if page:
        at.switch_page(page)
    return at.run()


def test_the_checker_catches_live_payloads():
    assert inert_problems(PAYLOAD) != []
    for payload in PAYLOADS:
        assert inert_problems(payload) != [], payload
        assert inert_problems(safe_markdown.text(payload)) == []
        assert inert_problems(safe_markdown.markdown(payload)) == []


def test_markdown_keeps_harmless_formatting():
    assert safe_markdown.markdown("**bold** _it_\n\n- a\n- b\n\n| x | y |\n| --- | --- |") == \
        "**bold** _it_\n\n- a\n- b\n\n| x | y |\n| --- | --- |"
    assert safe_markdown.code("ride.v.01") == "`ride.v.01`"
    assert safe_markdown.code("a``b") == "```a``b```"


def test_annotator_pages_render_payloads_inert(payload_study):
    (invite,) = studies.invite(payload_study, labels=[PAYLOADS[1][:60]])
    at = open_app(token=invite.token)  # instructions: title, instructions, example
    assert check_page(at) >= 4
    assert any("**Bold** stays" in m.value for m in at.markdown)
    at.button(key="start").click().run()  # rating page: labels from the CSV, scale labels
    assert check_screen(at) >= 2
    at.session_state["instructions-open"] = True  # the instructions above the item, opened
    at.run()
    assert check_page(at) >= 1 and check_screen(at) >= 2
    # the scale labels go to the answer bar as data, which the browser sets as textContent
    assert all(MARK in label for label in answer_bar(at)["labels"])
    press(at, "answer", 2)
    assert check_page(at) >= 1 and check_screen(at) >= 2
    press(at, "back")  # revising: the "you gave" notice
    assert check_page(at) >= 1 and check_screen(at) >= 3
    press(at, "continue")
    for _ in range(2):
        press(at, "answer", 4)
    assert any("Thank you" in t.value for t in at.title)  # completion: the title again
    assert check_page(at) >= 1
    assert any(PAYLOADS[2] == c.value for c in at.code)  # the completion code, literally


def test_payloads_in_urls_and_pseudonyms_are_inert(payload_study):
    at = open_app(study=PAYLOADS[2], PROLIFIC_PID="P1")  # the polite refusal quotes nothing of the URL
    assert at.error and check_page(at) == 0
    assignment.join_with_code("x", "code", PAYLOADS[4][:60])
    at = open_app(study="x")  # the pseudonym is taken: the error quotes it
    at.text_input[0].input("code")
    at.text_input[1].input(PAYLOADS[4][:60])
    at.button[0].click().run()
    assert at.error and "taken" in at.error[0].value
    assert check_page(at) >= 1


def test_console_renders_payloads_inert(payload_study, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    studies.invite(payload_study, labels=[PAYLOADS[0][:60], PAYLOADS[2][:60]])
    at = console_page("pw")
    assert not at.exception
    # progress, preview (the item as annotators see it), invite (completion code, revoke list);
    # the preview's scale labels go to the answer bar, which writes them as text (textContent)
    tabs = ("Dashboard", "Details", "Progress", "Preview", "Export", "Invite")   # only the open tab runs
    assert sum(check_page(open_tab(at, tab)) for tab in tabs) >= 3
    at.selectbox(key=f"revoke-who-{payload_study}").select(PAYLOADS[2][:60])
    at.button(key=f"revoke-{payload_study}").click().run()
    assert at.success and check_page(at) >= 1
    assert sum(check_page(open_tab(at, tab)) for tab in tabs) >= 3


def test_titles_and_banners_carry_no_invisible_character_after_a_colon():
    """The word joiner goes only where GFM would make a link ("https:/", "a@b",
    "www."), so "Study: rate pairs" copies as typed."""
    assert safe_markdown.WORD_JOINER not in safe_markdown.text("Study: rate pairs — part 2: images")
    assert safe_markdown.WORD_JOINER not in safe_markdown.markdown("Note: press Enter")
    for payload in ("https://x.example", "me@x.example", "www.x.example"):
        assert safe_markdown.WORD_JOINER in safe_markdown.text(payload)
        assert inert_problems(safe_markdown.text(payload)) == []
