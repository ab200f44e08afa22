"""The versioned rating prompt and its strict reply parser (SHOE §4.1, "Implementation Details").

SHOE asked each LLM to rate a synset pair "on a five-point scale, from completely dissimilar (0)
to synonymous (4), using the glosses of the corresponding synsets as reference". The prompt here
shows both synsets with their lemma names and glosses and the scale labels verbatim:

    0 completely dissimilar · 1 somewhat related but clearly distinct · 2 related but easily
    distinguishable · 3 very similar with subtle differences · 4 interchangeable

``PROMPT_VERSION`` names the wording; every cached answer records it, so changing the wording
means bumping the version (``PROMPT_SHA`` is checked by the tests to enforce that) and answers
given to an older wording are never mixed with new ones.

With ``batch_size > 1`` several numbered pairs go into one request (version
``PROMPT_VERSION + "-batch"``) and the reply must hold exactly one ``<number>: <score>`` line per
pair. Parsing is strict: a reply is accepted only when it is exactly what was asked for (one
integer 0–4, optionally wrapped in Markdown emphasis/quotes or followed by a full stop; a leading
``<think>…</think>`` block of a reasoning model is dropped). Anything else is *malformed*: the
request is retried and, when the retries are used up, the pair is recorded as missing — a score
is never guessed from a malformed reply.
"""

from __future__ import annotations

import hashlib
import re

from metrics.vocab import _wordnet as wordnet

PROMPT_VERSION = "shoe-v1"
SCALE = (
    (0, "completely dissimilar"),
    (1, "somewhat related but clearly distinct"),
    (2, "related but easily distinguishable"),
    (3, "very similar with subtle differences"),
    (4, "interchangeable"),
)
POS_WORD = {"v": "verbs (actions)", "n": "nouns (objects)"}

SYSTEM = ("You rate the semantic similarity of two WordNet concepts for the evaluation of "
          "human-object interaction detection. Judge the meanings given by the glosses, not "
          "the spelling of the words. Reply with the requested integer(s) only, no explanation.")

SINGLE = """Rate how similar in meaning these two {pos} are.

A: {a}
B: {b}

Scale:
{scale}

Answer with one integer from 0 to 4 and nothing else."""

BATCH = """Rate how similar in meaning the two {pos} of each numbered pair are.

{pairs}

Scale:
{scale}

Answer with exactly one line per pair, in the form "<pair number>: <integer 0-4>", and nothing else."""

_SCALE_TEXT = "\n".join(f"{k} = {label}" for k, label in SCALE)
PROMPT_SHA = hashlib.sha256("\x00".join((SYSTEM, SINGLE, BATCH, _SCALE_TEXT)).encode()).hexdigest()[:12]

_THINK = re.compile(r"^\s*<think>.*?</think>", re.S)
_ONE = re.compile(r"^[\s*_\"'`(\[]*([0-4])[\s*_\"'`)\].]*$")
_LINE = re.compile(r"^[\s*_\"'`]*(?:pair\s*)?(\d+)\s*[:.)=-]\s*[*_\"'`]*([0-4])[\s*_\"'`.]*$", re.I)


def prompt_version(batch_size: int = 1) -> str:
    """The version recorded with each answer: ``shoe-v1`` or ``shoe-v1-batch``."""
    return PROMPT_VERSION if batch_size <= 1 else PROMPT_VERSION + "-batch"


def describe(synset: str) -> str:
    """``"ride, sit (on) — sit and travel on the back of animal ..."``: lemma names and gloss."""
    return f"{', '.join(wordnet.lemma_names(synset))} — {wordnet.gloss(synset)}"


def messages(pairs: list[tuple[str, str]], pos: str) -> list[dict]:
    """Chat messages asking for the rating of one pair (or of several numbered pairs)."""
    word = POS_WORD.get(pos, "concepts")
    if len(pairs) == 1:
        a, b = pairs[0]
        user = SINGLE.format(pos=word, a=describe(a), b=describe(b), scale=_SCALE_TEXT)
    else:
        blocks = [f"Pair {k}:\nA: {describe(a)}\nB: {describe(b)}" for k, (a, b) in enumerate(pairs, 1)]
        user = BATCH.format(pos=word, pairs="\n\n".join(blocks), scale=_SCALE_TEXT)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


class MalformedReply(ValueError):
    """The reply is not exactly the integer(s) asked for."""


def parse_reply(text: str | None, n_pairs: int = 1) -> list[int]:
    """Scores from a reply, or :class:`MalformedReply`.

    >>> parse_reply("3"), parse_reply(" **2**.\\n"), parse_reply("<think>hmm</think>\\n4")
    ([3], [2], [4])
    >>> parse_reply("1: 0\\n2: 4", 2)
    [0, 4]
    >>> for bad in ("5", "3/4", "Score: 3", "2 or 3", "", None):
    ...     try: parse_reply(bad); print("accepted", bad)
    ...     except MalformedReply: pass
    """
    if text is None:
        raise MalformedReply("empty reply")
    body = _THINK.sub("", text, count=1).strip()
    if n_pairs == 1:
        match = _ONE.match(body)
        if not match:
            raise MalformedReply(f"not one integer 0-4: {text[:60]!r}")
        return [int(match.group(1))]
    found: dict[int, int] = {}
    for line in filter(None, (ln.strip() for ln in body.splitlines())):
        match = _LINE.match(line)
        if not match:
            raise MalformedReply(f"unexpected line {line[:60]!r}")
        k = int(match.group(1))
        if k in found or not 1 <= k <= n_pairs:
            raise MalformedReply(f"pair number {k} repeated or out of range")
        found[k] = int(match.group(2))
    if len(found) != n_pairs:
        raise MalformedReply(f"{len(found)} of {n_pairs} pairs answered")
    return [found[k] for k in range(1, n_pairs + 1)]


def estimate_tokens(text: str) -> int:
    """Rough token count (≈ 4 characters per token for English; used only for --dry-run)."""
    return max(1, round(len(text) / 4))
