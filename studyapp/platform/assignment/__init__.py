"""The annotator side: joining a study, the next item, submitting and revising ratings.

An annotator's key press goes through one door, ``answer`` (``keypress``): in one write
transaction the answer is checked and stored, the next item claimed and the answers counted,
and the page gets the next screen back (``Screen``), so the run after the press asks nothing
more. ``submit`` and ``next_item`` do each half on its own (simulations, imports, the first
screen).

Lock order (PostgreSQL; SQLite's write transaction serialises every writer anyway): whatever
changes an annotator's sequence (``answer``, ``submit``, ``next_item``, Prolific's
``release_claims``) takes the annotator's row first (``join.lock_annotator``, ``FOR NO KEY UPDATE``),
then the assignment answered (``FOR UPDATE``), then the items whose claim counter moves. Two
requests of one annotator at once, on two instances, therefore run one after the other: the
second finds the first's claim open and hands it out instead of claiming another, and a
claim never lands on an annotator whose claims are being released.

The claim policies are steps tried in order (``claim.CLAIM_STEPS``: practice, attention due,
main, take-over, attention owed, retest; the main step by the study's policy, default, active
or adaptive, after the routing check); the step that served an item is logged at DEBUG level.

Rules (all state lives in the database, so a closed tab, another device or a server restart
resumes where the annotator stopped):

- An annotator's sequence is a list of assignments with increasing ``position``. The next item
  is the first unanswered assignment; only when there is none is a new one claimed.
- A main-phase claim takes one of the item's ``raters_per_item`` slots: the insert names the
  slot (the item's claim counter as read), the counter moves only from the value read
  (compare-and-set), and ``(item_id, slot)`` is unique, so two annotators racing for the last
  slot cannot both get it; the loser's transaction rolls back and it looks again. Candidates are items the
  annotator has not had and that still have a free slot, least-claimed first, then in the
  annotator's own order (a permutation fixed by the stored seed, or the file order).
- In a study with active selection (spec ``[active]``) only the items drawn for humans
  (``Item.active_priority`` > 0) are handed out: least-claimed first, then the most uncertain
  (priority 1 first); an item not drawn is never handed out, so the recorded inclusion
  probabilities (``Item.active_probability``) keep the estimates unbiased.
- With spec ``[routing]`` an annotator whose fitted consistency falls below the threshold
  after ``min_ratings`` main ratings gets no new item: the session ends (``routed_at``).
- In an adaptive study (spec ``[adaptive]``, ``studyapp.platform.assignment.adaptive``) the slots are
  ``max_raters``, and the candidates are the items below ``min_raters`` claims or whose rater
  model SE is above ``target_se`` (or not known yet): those below ``min_raters`` first, then
  the largest SE, then least-claimed; the claim itself is the same compare-and-set.
- A claim left unanswered for ``claim_timeout_minutes`` may be taken over by another
  annotator once no item has a free slot (a conditional update: only one taker wins).
- A Prolific submission reported RETURNED or TIMED-OUT gives its unanswered claims back
  (``prolific.release_claims``): the item's highest slot moves into the freed one and the
  counter goes down by one, so the slots stay 0..n_claims-1; that annotator's session ends.
- Attention checks are spread evenly through the main items; ``repeat_items`` of the
  annotator's own items come back at the end (phase ``retest``).
- Ratings are appended: a changed answer is a new revision superseding the previous one; the
  same answer again (a double submit) returns the stored row.
- An answer names the assignment that was on screen. It is applied only to the annotator's
  current item (the first unanswered one) or, with ``revise=True``, to an item they went back
  to; anything else (a key press reaching an item already answered, e.g. in another tab) is
  refused with ``StaleAnswer`` and counted as a ``stale_answer_refused`` event.
- An answer from an item screen says how long its item had been fully drawn (``seen_ms``); under
  the study's ``[answers] min_seen_ms`` it is refused with ``AnswerTooSoon`` and counted as an
  ``answer_under_floor`` event (``ratings.refuse_under_seen_floor``).
"""

from .claim import free_slot, next_item
from .join import (
    AnnotatorSession,
    accept_instructions,
    annotator_by_token,
    annotator_session,
    join_prolific,
    join_with_code,
    resolve_token,
)
from .keypress import Screen, answer
from .ratings import AnswerTooSoon, StaleAnswer, log_keys_not_applied, submit
from .tasks import (
    Feedback,
    Task,
    answered_count,
    expected_effort,
    plan,
    planned_count,
    planned_total,
    practice_feedback,
    task_at,
    task_before,
)

__all__ = [
    "AnnotatorSession", "AnswerTooSoon", "Feedback", "Screen", "StaleAnswer", "Task", "accept_instructions",
    "annotator_by_token", "annotator_session", "answer", "answered_count", "expected_effort", "free_slot",
    "join_prolific", "join_with_code", "log_keys_not_applied", "next_item", "plan", "planned_count",
    "planned_total", "practice_feedback", "resolve_token", "submit", "task_at", "task_before",
]
