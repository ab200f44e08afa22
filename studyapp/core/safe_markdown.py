"""Untrusted text made inert for Streamlit's Markdown.

Titles, captions, alerts, widget labels and ``st.markdown`` render GitHub-flavoured Markdown,
so text that comes from a spec, an items CSV, a URL or an annotator (titles, instructions,
labels, glosses, pseudonyms, error messages quoting them) could otherwise become a link, an
image or — with ``unsafe_allow_html``, which the platform never uses — HTML.

- :func:`text` makes any string show literally: every ASCII punctuation character is
  backslash-escaped (so no ``<tag>``, ``[link](url)``, ``![image]``, code, math or directive
  can form) and a word joiner (U+2060, invisible) is put after a ``:`` that a ``/`` follows,
  after an ``@`` that a letter follows, and between ``www`` and ``.``, because GFM also turns
  bare ``https://…``, ``www.…`` and e-mail addresses into links *after* escapes are resolved.
  Only there: a title "Study: rate pairs" copies without an invisible character.
- :func:`markdown` keeps the harmless formatting of researcher-written instructions (emphasis,
  headings, lists, tables, block quotes) and escapes everything that can make a link, an image,
  HTML, code or math, with the same autolink breaking.
- :func:`code` is an inline code span whose fence is longer than any backtick run inside.
"""

from __future__ import annotations

import re
import string

WORD_JOINER = "\u2060"
_ALL_PUNCT = set(string.punctuation)
# Formatting characters instructions may keep: emphasis, headings, lists, tables, rules, quotes.
_KEEP = set("*_#-+|=~.>,;?'\"%/")
_AUTOLINK_BREAKS = [(re.compile(r"(www)(\\?\.)", re.IGNORECASE), r"\1" + WORD_JOINER + r"\2"),
                    (re.compile(r"(\\?:)(?=\\?/)"), r"\1" + WORD_JOINER),  # "https://"
                    (re.compile(r"(\\?@)(?=\w)"), r"\1" + WORD_JOINER)]  # e-mail addresses


def _escape(value: str, keep: set[str]) -> str:
    out = []
    for ch in value:
        if ch in _ALL_PUNCT and ch not in keep:
            out.append("\\" + ch)
        else:
            out.append(ch)
    escaped = "".join(out)
    for pattern, repl in _AUTOLINK_BREAKS:
        escaped = pattern.sub(repl, escaped)
    return escaped


def text(value) -> str:
    """``value`` (any object, shown with ``str``) as Markdown that renders literally."""
    return _escape(str(value), set())


def markdown(value) -> str:
    """Researcher-written Markdown with formatting kept but no links, images, HTML or code."""
    return _escape(str(value), _KEEP)


def code(value) -> str:
    """An inline code span showing ``value`` literally (one line)."""
    body = str(value).replace("\r", " ").replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"
