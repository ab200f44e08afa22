"""Per-study data kept in memory, and the least-claimed item in an annotator's own order found
without ordering the whole study.

A study's items never change after it is created, so what depends on them alone (how many
there are, an annotator's permutation of them) is computed once per database, study (and its
creation time) and kept (``study_cached``). The free slot an annotator gets next is the
least-claimed item they lack, first in their order (``assignment.claim._order_key``); ordering every
item of that claim level by the permutation in SQL reads the whole level (5,000 rows on a
5,000-item study filled evenly), so :func:`least_claimed_in_order` asks the level's index for
the few rows it needs instead.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from functools import cache

from sqlalchemy import BigInteger, Integer, and_, any_, bindparam, cast, exists
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Row
from sqlmodel import Session, select

from ...core.models import Assignment, Item, Study

CACHED_STUDIES = 1024
ORDER_IDS_KEPT = 2 ** 24  # item ids kept over all annotators' orders (8 bytes each: 128 MiB at most)
CHUNK = 64  # item ids looked up at once, in the annotator's order, past their own
MAX_WINDOW = 1024  # the most ids one look-up names

_CACHE: dict[tuple, object] = {}
_ORDERS: dict[tuple, array] = {}


def study_cached(session: Session, study: Study | Row, name: str, compute: Callable[[], object],
                 *, kept: dict | None = None, limit: int = CACHED_STUDIES,
                 weight: Callable[[object], int] = lambda value: 1):
    """``compute()`` once per database, study (and its creation time) and ``name``; kept for the
    life of the process (the least recently used entries go first once the entries' ``weight``
    sums to more than ``limit``; one entry is always kept)."""
    kept = _CACHE if kept is None else kept
    key = cache_key(session, study, name)
    if key in kept:
        kept[key] = kept.pop(key)
        return kept[key]
    value = compute()
    held = weight(value) + sum(weight(v) for v in kept.values())
    while kept and held > limit:
        held -= weight(kept.pop(next(iter(kept))))
    kept[key] = value
    return value


def cache_key(session: Session, study: Study | Row, name: str) -> tuple:
    """What ``study_cached`` keeps ``name``'s value under: the database, the study and its
    creation time (a study id reused after a reset is another study), the name."""
    return str(session.get_bind().engine.url), study.id, study.created_at, name


def annotator_order(session: Session, study: Study | Row, name: str,
                    compute: Callable[[], Sequence[int]]) -> array:
    """An annotator's item ids in their order (``compute()``), kept until they finish
    (:func:`forget_order`) for the annotators seen last, up to ``ORDER_IDS_KEPT`` ids in all
    (every open session's order on a large study: each miss sorts the whole study); ``name``
    names the annotator and what the order covers."""
    return study_cached(session, study, name, lambda: array("q", compute()), kept=_ORDERS,
                        limit=ORDER_IDS_KEPT, weight=len)


def forget_order(session: Session, study: Study | Row, name: str) -> None:
    """Drop an annotator's order (``annotator_order``'s ``name``) once they have finished."""
    _ORDERS.pop(cache_key(session, study, name), None)


def main_items(session: Session, study: Study | Row) -> tuple[tuple[int, int], ...]:
    """(id, position) of every main item of the study, by id (cached)."""
    return study_cached(session, study, "main items", lambda: tuple(
        (i, p) for i, p in session.exec(select(Item.id, Item.position).where(
            Item.study_id == study.id, Item.role == "main").order_by(Item.id))))


ITEMS, ASSIGNMENTS = Item.__table__, Assignment.__table__

# A prime p ≡ 2 (mod 3): x ↦ x³ mod p permutes 0 … p − 1, as x ↦ a·x + b does (a ≠ 0); their
# composition orders consecutive ids with no visible pattern (the affine map alone left 1 in 11
# annotators of a 12-item study in file order), and every product stays below 2⁶³.
PERMUTATION_MODULUS = 2_147_483_579


def permuted(ids, a, b):
    """``(a·id + b)³ mod p``, an annotator's permutation ``(a, b)`` of item ids, for whatever
    ``ids`` is: a SQL column, an int64 array or an int (every product stays below 2⁶³)."""
    shifted = (ids * a + b) % PERMUTATION_MODULUS
    return shifted * shifted % PERMUTATION_MODULUS * shifted % PERMUTATION_MODULUS


# an annotator's order as SQL: the file order, or their permutation (parameters ``a``, ``b``)
ORDER_KEYS = {True: ITEMS.c.position,
              False: permuted(cast(ITEMS.c.id, BigInteger), bindparam("a", type_=BigInteger),
                              bindparam("b", type_=BigInteger))}
NOT_HANDED = ~exists().where(ASSIGNMENTS.c.item_id == ITEMS.c.id,
                             ASSIGNMENTS.c.annotator_id == bindparam("annotator"))
# a chunk of ids with their claims, looked up by id only: with the level in the query both
# databases also read the claims index, whose level holds every item of an evenly filled study
# (PostgreSQL takes the chunk as one array, so the statement's text, and its prepared plan, is
# the same for every chunk; SQLite gets one parameter per id)
IN_CHUNK = {"sqlite": ITEMS.c.id.in_(bindparam("chunk", expanding=True)),
            "postgresql": ITEMS.c.id == any_(bindparam("chunk", type_=ARRAY(Integer)))}


@cache
def _level_queries(restricted: bool, dialect: str, fixed: bool):
    """(up to ``CHUNK + 1`` items at a level, the first item of a chunk in the annotator's order (``fixed``: the file order) at the least claim
    level with a free slot, with that level) among the study's main items the annotator lacks;
    ``restricted``: only the ids ``eligible``."""
    def free(items):
        return [items.c.study_id == bindparam("study"), items.c.role == "main",
                items.c.n_claims < bindparam("raters"),
                ~exists().where(ASSIGNMENTS.c.item_id == items.c.id,
                                ASSIGNMENTS.c.annotator_id == bindparam("annotator")),
                *([items.c.id.in_(bindparam("eligible", expanding=True))] if restricted else [])]

    def level(items):
        return select(items.c.n_claims).where(*free(items)).order_by(items.c.n_claims).limit(1)

    # the chunk's first item at the least level, or a row with no item: the level is always
    # read (no row: no free slot at all); the level is joined, not filtered on, so the items
    # are still looked up by id
    lowest = level(ITEMS.alias("free")).subquery("lowest")
    at_level = (select(lowest.c.n_claims.label("level"), ITEMS.c.id).select_from(lowest.outerjoin(
        ITEMS, and_(IN_CHUNK[dialect], NOT_HANDED, ITEMS.c.n_claims == lowest.c.n_claims)))
        .order_by(ORDER_KEYS[fixed]).limit(1))
    return (select(ITEMS.c.id).where(*free(ITEMS), ITEMS.c.n_claims == bindparam("level"))
            .limit(CHUNK + 1), at_level)


def least_claimed_in_order(session: Session, study: Study | Row, annotator_id: int, eligible: list[int] | None,
                           order: Sequence[int], rank: Callable[[int], int], handed: int = 0,
                           permutation: tuple[int, int] | None = None) -> tuple[int, int] | None:
    """(item id, claims) of the study's main item with a free slot that the annotator lacks (among
    ``eligible`` ids, when given) with the fewest claims, first by ``rank`` among those: the
    result of ``ORDER BY n_claims, rank LIMIT 1``. ``order``: the candidate ids sorted by
    ``rank``; ``handed``: how many main items the annotator already has; ``permutation``: the
    ``(a, b)`` of ``permuted`` that ``rank`` is, None for the file order.

    The least claim level comes from the claims index (it stops at the first item meeting the
    conditions), read with the first window; then ``order`` is looked up a window at a time (by
    primary key, the items the annotator had left out by the anti-join ``NOT_HANDED``), and a
    level found to hold at most ``CHUNK`` items is read whole. An annotator's own items come
    early in their order (each was the first free one when claimed), so the first window is
    ``CHUNK`` ids past ``handed``, and each window after one that found nothing is twice as
    long, up to ``MAX_WINDOW``: the statements and rows read stay bounded however long the
    annotator's history is."""
    connection = session.connection()
    run = connection.execute  # prepared Core statements: no ORM work per call or row
    few_query, at_level = _level_queries(eligible is not None, connection.dialect.name, permutation is None)
    params = {"study": study.id, "raters": study.raters_per_item, "annotator": annotator_id,
              **({"eligible": eligible} if eligible is not None else {})}
    key = dict(zip("ab", permutation)) if permutation else {}
    start, size, first = 0, min(CHUNK + handed, MAX_WINDOW), True
    while first or start < len(order):
        found = run(at_level, {**params, **key, "chunk": list(order[start:start + size])}).first()
        start, size = start + size, min(size * 2, MAX_WINDOW)
        if found is None:   # no free slot at all
            return None
        if found.id is not None:
            return found.id, found.level
        if first:
            first = False
            few = run(few_query, {**params, "level": found.level}).scalars().all()
            if len(few) <= CHUNK:
                return (min(few, key=rank), found.level) if few else None
    return None
