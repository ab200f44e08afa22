"""Research side: create studies from specs, invite annotators, watch progress, pause / close."""

from __future__ import annotations

import json
import secrets
import statistics
from dataclasses import dataclass

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from metrics import InputError
from metrics.core import check_name

from ...core import auth, config
from ...core.accounts import CLI, Actor, require
from ...core.models import Annotator, Assignment, Item, Rating, Study
from ...core.storage import log_event, read_session, write_session
from ..specs.spec_model import StudySpec, spec_of

STATUSES = ("open", "paused", "closed")


@dataclass(frozen=True)
class Invite:
    pseudonym: str
    token: str

    def link(self, base: str | None = None) -> str:
        return f"{base or config.base_url()}/?token={self.token}"


def _new_study_owner(session: Session, slug: str | None, actor: Actor, owner: str | None) -> str:
    """The owner of a new study named ``slug``; refused for an unknown owner or a taken slug."""
    owner = actor.name if owner is None else study_owner_account(session, owner)
    if slug is not None and session.exec(select(Study.id).where(Study.slug == slug)).first() is not None:
        raise InputError(f"a study named {slug!r} already exists")
    return owner


def refuse_new_study(slug: str | None, *, actor: Actor = CLI, owner: str | None = None) -> None:
    """The refusals ``create_study`` would give for this slug and owner, checked before a spec's
    items are sampled (which may take seconds); None: the slug is not known yet."""
    require(actor, "create")
    with read_session() as session:
        _new_study_owner(session, slug, actor, owner)


def create_study(spec: StudySpec, engine: Engine | None = None, *, actor: Actor = CLI,
                 owner: str | None = None) -> int:
    """Store a validated spec and its items in one transaction, owned by ``owner`` (an account
    that may create studies; default ``actor``); returns the study id."""
    require(actor, "create")
    with write_session(engine) as session:
        owner = _new_study_owner(session, spec.slug, actor, owner)
        study = Study(slug=spec.slug, title=spec.title, study_type=spec.study_type,
                      spec_json=spec.to_json(), raters_per_item=spec.raters_per_item,
                      items_per_annotator=spec.items_per_annotator,
                      access_code_hash=auth.slow_hash(spec.access_code) if spec.access_code else None,
                      owner=owner)
        session.add(study)
        session.flush()
        for position, item in enumerate(spec.items):
            session.add(Item(study_id=study.id, item_key=item.key, role=item.role,
                             position=position, fields_json=json.dumps(item.fields),
                             expected=item.expected, llm_rating=item.llm_rating,
                             active_probability=item.active_probability,
                             active_priority=item.active_priority))
        log_event(session, "study_created", study.id, actor=actor.name, n_items=len(spec.items),
                  source=spec.items_source, owner=owner)
        return study.id


def study_owner_account(session: Session, name: str) -> str:
    """``name`` when it is an account that may own studies (an owner or researcher account, or
    the platform's first owner), else an InputError naming the accounts that may."""
    from ...core.accounts import FIRST_OWNER
    from ...core.models import Researcher

    may_own = [FIRST_OWNER.name] + list(session.exec(
        select(Researcher.name).where(Researcher.role.in_(["owner", "researcher"])).order_by(Researcher.id)))
    if name not in may_own:
        raise InputError(f"owner {name!r}: no owner or researcher account has this name (accounts that "
                         f"may own studies: {', '.join(may_own)})")
    return name


def set_owner(study_id: int, owner: str, engine: Engine | None = None, *, actor: Actor = CLI) -> str:
    """Give a study to another account (the platform owner, or the study's current owner, may);
    returns the previous owner. The new owner must be an owner or researcher account."""
    with write_session(engine) as session:
        study = _study(session, study_id)
        require(actor, "change", study)
        owner = study_owner_account(session, owner)
        old, study.owner = study.owner, owner
        session.add(study)
        log_event(session, "owner_changed", study_id, actor=actor.name, old=old, new=owner)
        return old


def study_by_slug(session: Session, slug: str) -> Study:
    study = session.exec(select(Study).where(Study.slug == slug)).first()
    if study is None:
        raise InputError(f"no study named {slug!r}")
    return study


def list_studies(engine: Engine | None = None) -> list[Study]:
    with read_session(engine) as session:
        return list(session.exec(select(Study).order_by(Study.id)))


def invite(study_id: int, count: int = 1, labels: list[str] | None = None,
           engine: Engine | None = None, *, actor: Actor = CLI, source: str = "invite") -> list[Invite]:
    """Create ``count`` invite links (or one per label); the tokens are returned only here.
    ``source``: the annotators' ``source`` (``simulated`` for ``studyapp simulate``'s raters)."""
    labels = labels or []
    if count < 1 and not labels:
        raise InputError("ask for at least one invite")
    out = []
    with write_session(engine) as session:
        require(actor, "change", _study(session, study_id))
        taken = set(session.exec(select(Annotator.pseudonym).where(Annotator.study_id == study_id)))
        for k in range(max(count, len(labels))):
            if k < len(labels):
                name = check_name(labels[k], "invite label")
                if not name or len(name) > 64:
                    raise InputError(f"invite label {labels[k]!r} must have 1-64 characters")
                if name in taken:
                    raise InputError(f"pseudonym {name!r} is already used in this study")
            else:
                name = f"invite-{secrets.token_hex(3)}"
                while name in taken:
                    name = f"invite-{secrets.token_hex(3)}"
            taken.add(name)
            token = auth.new_token()
            session.add(Annotator(study_id=study_id, pseudonym=name, source=source,
                                  token_hash=auth.token_hash(token), seed=secrets.randbits(30)))
            out.append(Invite(name, token))
        log_event(session, "invites_created", study_id, actor=actor.name, pseudonyms=[i.pseudonym for i in out])
    return out


SERVED_URL_KEY = "served_base_url"


def record_served_url(url: str, engine: Engine | None = None) -> None:
    """Remember the address ``serve`` serves the app on, for the command line's invite links."""
    from ...core.models import Setting

    with write_session(engine) as session:
        row = session.get(Setting, SERVED_URL_KEY) or Setting(key=SERVED_URL_KEY, value=url)
        row.value = url
        session.add(row)


def invite_base_url(explicit: str | None = None, engine: Engine | None = None) -> tuple[str, str]:
    """(the base address of invite links made outside a browser, where it comes from):
    ``explicit`` (``--base-url``), else ``STUDYAPP_BASE_URL``, else the address ``serve``
    last recorded, else ``config.base_url()`` (``STUDYAPP_PORT`` or 8501 on localhost)."""
    import os

    from ...core.models import Setting

    if explicit:
        return explicit.rstrip("/"), "--base-url"
    if os.environ.get("STUDYAPP_BASE_URL"):
        return config.base_url(), "STUDYAPP_BASE_URL"
    with read_session(engine) as session:
        row = session.get(Setting, SERVED_URL_KEY)
    if row is not None:
        return row.value, "the address `serve` recorded when it last started"
    return config.base_url(), "no server has recorded its address yet: the default"


def invite_names(study_id: int, names: list[str], engine: Engine | None = None, *,
                 actor: Actor = CLI) -> tuple[list[Invite], list[str]]:
    """One link per name, skipping names the study already has (or the list repeats): returns
    (the invites created, the names skipped) so the console can report each duplicate."""
    with read_session(engine) as session:
        taken = set(session.exec(select(Annotator.pseudonym).where(Annotator.study_id == study_id)))
    fresh, duplicates = [], []
    for name in (n.strip() for n in names if n.strip()):
        (duplicates if name in taken else fresh).append(name)
        taken.add(name)
    return (invite(study_id, 0, fresh, engine, actor=actor) if fresh else []), duplicates


def raters_of(slug: str, engine: Engine | None = None) -> list[str]:
    """The pseudonyms of those who rated something in study ``slug``, in joining order: the
    labels of a with-image pass's invites (it shows each of them their own pairs)."""
    with read_session(engine) as session:
        earlier = study_by_slug(session, slug).id
        raters = list(session.exec(select(Annotator.pseudonym).where(
            Annotator.study_id == earlier,
            Annotator.id.in_(select(Rating.annotator_id).where(Rating.study_id == earlier)))
            .order_by(Annotator.id)))
    if not raters:
        raise InputError(f"study {slug!r}: nobody has rated anything in it yet")
    return raters


def revoke(study_id: int, pseudonym: str, engine: Engine | None = None, *, actor: Actor = CLI) -> None:
    """Withdraw an annotator's access: their link (and Prolific id) is refused from now on;
    their answers so far are kept."""
    with write_session(engine) as session:
        require(actor, "change", _study(session, study_id))
        annotator = session.exec(select(Annotator).where(Annotator.study_id == study_id,
                                                         Annotator.pseudonym == pseudonym)).first()
        if annotator is None:
            raise InputError(f"the study has no annotator {pseudonym!r}")
        if auth.is_revoked(annotator.token_hash):
            raise InputError(f"annotator {pseudonym!r} is already revoked")
        annotator.token_hash = auth.revoked_marker()
        session.add(annotator)
        log_event(session, "annotator_revoked", study_id, annotator.id, actor=actor.name, pseudonym=pseudonym)


def set_status(study_id: int, status: str, engine: Engine | None = None, *, actor: Actor = CLI) -> None:
    if status not in STATUSES:
        raise InputError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    with write_session(engine) as session:
        study = _study(session, study_id)
        require(actor, "change", study)
        old, study.status = study.status, status
        session.add(study)
        log_event(session, "status_changed", study_id, actor=actor.name, old=old, new=status)


def _study(session: Session, study_id: int) -> Study:
    study = session.get(Study, study_id)
    if study is None:
        raise InputError(f"no study with id {study_id}")
    return study


def _current_ratings(session: Session, study_id: int):
    """(assignment id, annotator id, item id, phase) of every answered assignment of a study
    (plain rows: the console reads them on every page run)."""
    answered = select(Rating.assignment_id).where(Rating.study_id == study_id).distinct().subquery()
    return session.exec(
        select(Assignment.id, Assignment.annotator_id, Assignment.item_id, Assignment.phase)
        .join(answered, answered.c.assignment_id == Assignment.id)).all()


def progress(study_id: int, engine: Engine | None = None) -> dict:
    """Per annotator (done, target, median seconds, status) and per item (done / needed). In an
    adaptive study ``ratings_needed`` is the ``max_raters`` ceiling; each item also has its
    ``state`` (``adaptive.item_state``) and ``model_se``, and ``items_done`` counts the items
    no longer open (retired at the target SE, or at ``max_raters``). With active selection
    (spec ``[active]``) the items are those drawn for humans (``items_not_drawn``: the others)."""
    from ..assignment import plan  # the plan lives with the assignment rules (per annotator: a
    # with-image pass counts the pairs each annotator rated before)

    with read_session(engine) as session:
        study = session.get(Study, study_id)
        spec = spec_of(study)
        annotators = list(session.exec(select(Annotator).where(Annotator.study_id == study_id)
                                       .order_by(Annotator.id)))
        items = list(session.exec(select(Item).where(Item.study_id == study_id).order_by(Item.position)))
        rows = _current_ratings(session, study_id)
        first_try = session.exec(select(Rating.assignment_id, Rating.seconds_spent)
                                 .where(Rating.study_id == study_id, Rating.revision == 0)).all()
        claimed = dict(session.exec(select(Assignment.item_id, func.count(Assignment.id))
                                    .where(Assignment.study_id == study_id, Assignment.phase == "main")
                                    .group_by(Assignment.item_id)).all())
        targets = {a.id: plan(session, a, study) for a in annotators}
    seconds_by_assignment = dict(first_try)
    done_by_annotator: dict[int, int] = {}
    secs_by_annotator: dict[int, list[float]] = {}
    done_by_item: dict[int, int] = {}
    secs_by_item: dict[int, list[float]] = {}
    for assignment_id, annotator_id, item_id, phase in rows:
        done_by_annotator[annotator_id] = done_by_annotator.get(annotator_id, 0) + 1
        secs = seconds_by_assignment.get(assignment_id)
        secs_by_annotator.setdefault(annotator_id, []).append(secs)
        if phase == "main":
            done_by_item[item_id] = done_by_item.get(item_id, 0) + 1
            secs_by_item.setdefault(item_id, []).append(secs)
    # with [active], only the items drawn for humans are to be rated
    main_items = [item for item in items if item.role == "main" and (not spec.active or item.active_priority)]
    n_main = len(main_items)
    per_annotator = [{
        "annotator": a.pseudonym, "source": a.source,
        "status": annotator_status(a, done_by_annotator.get(a.id, 0)),
        "done": done_by_annotator.get(a.id, 0), "target": targets[a.id],
        "median_seconds": _median(secs_by_annotator.get(a.id)),
    } for a in annotators]
    per_item = [{
        "item_id": item.item_key, "done": done_by_item.get(item.id, 0),
        "claimed": claimed.get(item.id, 0), "needed": study.raters_per_item,
        "median_seconds": _median(secs_by_item.get(item.id)),
    } for item in main_items]
    total_needed = n_main * study.raters_per_item
    total_done = sum(min(d, study.raters_per_item) for d in done_by_item.values())
    rated = {annotator_id for _a, annotator_id, _i, phase in rows if phase == "main"}
    out = {"study": study.slug, "status": study.status, "items": n_main,
           "ratings_done": total_done, "ratings_needed": total_needed,
           "annotators": per_annotator, "per_item": per_item, "rated_at_least_once": len(rated)}
    if spec.active:
        out["items_not_drawn"] = sum(1 for item in items if item.role == "main") - n_main
    if spec.adaptive:  # ratings_needed is only a ceiling: items retire at the target SE
        from ..assignment.adaptive import item_state

        for row, item in zip(per_item, main_items):
            row["state"] = item_state(item.n_claims, item.model_se, spec.adaptive)
            row["model_se"] = item.model_se
        out["items_done"] = sum(row["state"] != "open" for row in per_item)
    return out


HEADLINE_STATES = ("screened out", "returned", "timed out", "routed out", "revoked", "completed")


def headline_counts(p: dict) -> dict[str, int]:
    """The console's and ``status``'s headline: annotators who answered at least one main item
    (the raters the dashboard's agreement counts), who arrived (opened their link, or came from
    Prolific), who were invited and have not arrived, and how many are in each end state
    (``annotator_status``; Prolific's screened-out, returned and timed-out participants are
    those of ``prolific.summary``)."""
    arrived = [a for a in p["annotators"] if a["source"] == "prolific" or a["status"] != "invited"]
    counts = {"rated at least once": p["rated_at_least_once"], "arrived": len(arrived),
              "invited, not arrived": len(p["annotators"]) - len(arrived)}
    for state in HEADLINE_STATES:
        counts[state] = sum(a["status"] == state for a in p["annotators"])
    return counts


def counts_line(p: dict) -> str:
    """``headline_counts`` as one line, leaving out the states nobody is in."""
    counts = headline_counts(p)
    return ", ".join(f"{name}: {n}" for name, n in counts.items() if n or name in ("rated at least once", "arrived"))


def annotator_status(annotator: Annotator, n_answered: int) -> str:
    """invited (nothing yet), rating (started or answered), completed, revoked; for Prolific
    participants also returned or timed out (as Prolific reports), or screened out (the
    comprehension check failed twice); routed out (spec ``[routing]``)."""
    from ..assignment.prolific import ATTEMPTS, ENDED

    if auth.is_revoked(annotator.token_hash):
        return "revoked"
    if annotator.prolific_status in ENDED:
        return ENDED[annotator.prolific_status]
    if annotator.comprehension_failures >= ATTEMPTS:
        return "screened out"
    if annotator.routed_at:
        return "routed out"
    if annotator.completed_at:
        return "completed"
    return "rating" if annotator.started_at or n_answered else "invited"


def _median(values: list[float] | None) -> float | None:
    values = [v for v in (values or []) if v is not None]
    return round(statistics.median(values), 2) if values else None


def joinable_title(slug: str, engine: Engine | None = None) -> str | None:
    """The title of an open study that accepts an access code, else None."""
    with read_session(engine) as session:
        return session.exec(select(Study.title).where(
            Study.slug == slug, Study.status == "open",
            Study.access_code_hash.is_not(None))).first()


def study_items(study_id: int, engine: Engine | None = None) -> list[tuple[str, str, dict]]:
    """(item key, role, fields) of every item of a study, in file order."""
    with read_session(engine) as session:
        items = session.exec(select(Item).where(Item.study_id == study_id).order_by(Item.position))
        return [(i.item_key, i.role, json.loads(i.fields_json)) for i in items]
