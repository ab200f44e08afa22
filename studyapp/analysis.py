"""A study's analysis for the console: agreement, reliability, the rater model, alignment, w
tuning, and the HTML report."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from sqlalchemy.engine import Engine

from metrics import InputError
from metrics.agreement import AgreementReport, agreement_report, rating_matrix, validate_ratings
from metrics.alignment import alignment_table
from metrics.baseline import load_default
from metrics.rater_model import RaterModel, fit_rater_model
from metrics.reliability import reliability
from metrics.report import write_report
from metrics.study_items import component_similarities, join_ratings
from metrics.tuning import tune_w

from . import config
from .dashboard import agreement_over_time
from .exports import study_tables


@dataclass
class StudyAnalysis:
    agreement: AgreementReport
    alignment: dict | None
    tuning: dict | None
    rater_model: RaterModel | None = None
    reliability: dict | None = None
    over_time: pd.DataFrame | None = None   # agreement at successive rating counts (the dashboard's)


def analyse_study(slug: str, n_resamples: int = 1000, permutations: int = 1000,
                  engine: Engine | None = None) -> StudyAnalysis:
    """Agreement of a study's main ratings, plus alignment and w tuning for HOI-pair studies.

    Sized for a report the researcher waits for: 1,000 bootstrap resamples and 1,000
    permutations per alignment p-value (p resolved to 1/1001; ``metrics alignment`` runs 10,000).
    """
    tables = study_tables(slug, engine)
    ratings = tables["ratings.csv"]
    ratings = ratings[ratings["phase"] == "main"]
    if ratings["annotator"].nunique() < 2:
        raise InputError("the analysis needs ratings from at least two annotators")
    ratings = validate_ratings(ratings, f"study {slug}")
    report = agreement_report(ratings, n_resamples=n_resamples)
    model = fit_rater_model(ratings)
    stats = reliability(rating_matrix(ratings), n_resamples=n_resamples)
    alignment, tuning = pair_analyses(tables["items.csv"], ratings, permutations)
    return StudyAnalysis(report, alignment, tuning, model, stats, agreement_over_time(ratings, n_resamples))


def pair_analyses(items: pd.DataFrame, ratings: pd.DataFrame, permutations: int) -> tuple[dict | None, dict | None]:
    """Metric–human alignment (``permutations`` per p-value) and w tuning of an HOI-pair
    study's main items and ratings; (None, None) for items that are not HOI pairs."""
    if not {"gt_verb", "gt_object", "pred_verb", "pred_object"} <= set(items.columns):
        return None, None
    items = items[items["role"] == "main"].drop(columns=["role", "expected"])
    items = items.astype({"item_id": str})
    for column in ("verb_sim", "object_sim"):
        items[column] = pd.to_numeric(items[column], errors="coerce")
    items = component_similarities(items, load_default("v"), load_default("n"))
    rated = join_ratings(items, ratings)
    return alignment_table(rated, metrics=[], n_resamples=permutations), tune_w(rated)


def write_study_report(slug: str, analysis: StudyAnalysis, out_dir: str | Path | None = None) -> Path:
    """Write report.html and its tables into ``exports/<study>/<timestamp>/report/``."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = Path(out_dir or config.exports_dir()) / slug / stamp / "report"
    return write_report(target, agreement=analysis.agreement, alignment=analysis.alignment,
                        tuning=analysis.tuning, title=f"Study report: {slug}",
                        rater_model=analysis.rater_model, reliability=analysis.reliability,
                        over_time=analysis.over_time)
