"""The demo study: created once from ``studies/demo.toml``, then reused."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import select

from ...core import config
from ...core.models import Study
from ...core.storage import read_session
from ..records.studies import Invite, create_study, invite
from .spec_files import load_spec, spec_slug

DEMO_SPEC = config.STUDIES_DIR / "demo.toml"


def seed_demo(engine: Engine | None = None, spec_path=DEMO_SPEC) -> tuple[int, bool, Invite]:
    """Create the demo study unless it exists; returns (study id, created now, a fresh invite).

    Invite tokens are stored only as hashes, so every call creates a new link to print."""
    slug = spec_slug(spec_path)
    with read_session(engine) as session:
        study_id = session.exec(select(Study.id).where(Study.slug == slug)).first()
    created = study_id is None
    if created:
        study_id = create_study(load_spec(spec_path), engine)
    return study_id, created, invite(study_id, 1, engine=engine)[0]
