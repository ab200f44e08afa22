"""A study's analysis for the console: agreement, reliability, the rater model, the study type's
alignment and w tuning (``report_analyses``), and the HTML report."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from metrics import InputError
from metrics.study import (
    AgreementReport,
    RaterModel,
    agreement_report,
    alpha_of_matrix,
    bootstrap_intervals,
    fit_rater_model,
    mean_offdiagonal,
    pairwise_agreement_matrix,
    rating_matrix,
    reliability,
    validate_ratings,
    write_report,
)

from ...core.storage import read_session
from ...studytypes import Section, get_type
from ..records.exports import SIMULATED, study_folder, study_tables
from ..records.studies import study_by_slug
from ..specs.spec_model import spec_of
from .ppi_estimates import ppi_section

LIVE_RESAMPLES = 200   # bootstrap resamples and permutations of the console's live figures
TIME_POINTS = 10       # agreement over time: at this many rating counts


@dataclass
class StudyAnalysis:
    agreement: AgreementReport
    alignment: dict | None = None
    tuning: dict | None = None
    rater_model: RaterModel | None = None
    reliability: dict | None = None
    over_time: pd.DataFrame | None = None   # agreement at successive rating counts
    prediction_powered: Section | None = None   # spec [llm] / [routing] (studyapp.platform.reporting.ppi_estimates)
    unavailable: dict = field(default_factory=dict)   # part -> why it could not be computed
    simulated_left_out: list = field(default_factory=list)   # simulated raters not in these numbers


RATER_TABLES = ("ratings.csv", "ratings_history.csv", "annotators.csv", "cant_judge.csv")


def rater_tables(tables: dict[str, pd.DataFrame], *, include_simulated: bool = False
                 ) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The export tables an analysis reads — without the simulated raters (annotators.csv
    ``source`` ``simulated``, from ``studyapp simulate``) unless ``include_simulated`` — and the
    simulated raters left out. A study whose every rater is simulated (a pilot, a demo) is
    analysed as it is: nothing is mixed there. One rule for the dashboard, the report and
    ``studyapp report``."""
    annotators = tables["annotators.csv"]
    simulated = annotators.loc[annotators["source"] == SIMULATED, "annotator"].astype(str).tolist()
    rated = set(tables["ratings.csv"]["annotator"].astype(str))
    if include_simulated or not simulated or rated <= set(simulated):
        return tables, []
    kept = dict(tables)
    for name in RATER_TABLES:
        if name in kept and "annotator" in kept[name].columns:
            table = kept[name]
            kept[name] = table[~table["annotator"].astype(str).isin(simulated)].reset_index(drop=True)
    return kept, simulated


def analyse_study(slug: str, n_resamples: int = 1000, permutations: int = 1000,
                  engine: Engine | None = None, tables: dict | None = None, *,
                  include_simulated: bool = False) -> StudyAnalysis:
    """Agreement of a study's main ratings, plus what its type adds (alignment and w tuning of
    HOI-pair studies).

    Sized for a report the researcher waits for: 1,000 bootstrap resamples and 1,000
    permutations per alignment p-value (p resolved to 1/1001; ``metrics alignment`` runs 10,000).
    ``tables``: the study's export tables when the caller has read them already. Simulated raters
    are left out unless ``include_simulated`` (:func:`rater_tables`).
    """
    with read_session(engine) as session:
        study = study_by_slug(session, slug)
        study_type = get_type(study.study_type)
    tables, simulated = rater_tables(tables or study_tables(slug, engine), include_simulated=include_simulated)
    ratings = tables["ratings.csv"]
    ratings = ratings[ratings["phase"] == "main"]
    if (reason := why_no_agreement(ratings)) is not None:
        raise InputError(f"study {slug!r} has no report yet: {reason}")
    ratings = validate_ratings(ratings, source=f"study {slug}")
    result = rating_analyses(ratings, n_resamples)
    result.alignment, result.tuning = study_type.report_analyses(tables["items.csv"], ratings, permutations)
    result.prediction_powered = ppi_section(tables, spec_of(study))
    result.simulated_left_out = simulated
    return result


def rating_analyses(ratings: pd.DataFrame, n_resamples: int) -> StudyAnalysis:
    """Agreement (``n_resamples`` bootstrap resamples), the rater model, reliability and agreement
    over time of validated main ratings — one computation for the report and the console's
    dashboard. A rater model or reliability table that cannot be fitted is None, with the
    reason in ``unavailable``; undefined agreement (no variation) is an InputError."""
    with np.errstate(invalid="ignore", divide="ignore"):
        report = agreement_report(ratings, n_resamples=n_resamples)
    if not np.isfinite(report.krippendorff_alpha):
        raise InputError("the items rated by two or more annotators all got the same rating so far, "
                         "so agreement beyond chance is undefined")
    result = StudyAnalysis(report, over_time=agreement_over_time(ratings, n_resamples))
    for name, fit in (("rater_model", lambda: fit_rater_model(ratings)),
                      ("reliability", lambda: reliability(rating_matrix(ratings), n_resamples=n_resamples))):
        try:
            setattr(result, name, fit())
        except InputError as exc:
            result.unavailable[name] = str(exc)
    return result


def why_no_agreement(main: pd.DataFrame) -> str | None:
    """Why agreement cannot be computed yet from these main ratings, or None."""
    if main.empty:
        return "no main ratings yet"
    n_annotators = main["annotator"].nunique()
    if n_annotators < 2:
        return f"only one annotator ({main['annotator'].iloc[0]}) has rated so far; agreement needs two"
    shared = main.groupby("item_id")["annotator"].nunique()
    if not (shared >= 2).any():
        return (f"{n_annotators} annotators have rated, but no item has been rated by two of them yet "
                "(each statistic compares annotators on the items they share)")
    if main["rating"].astype(str).nunique() < 2:
        return "every rating so far has the same value, so agreement beyond chance is undefined"
    return None


def agreement_over_time(ratings: pd.DataFrame, n_resamples: int = LIVE_RESAMPLES,
                        points: int = TIME_POINTS) -> pd.DataFrame:
    """Krippendorff's α and the mean Eq. 13 agreement, each with its bootstrap interval
    (``n_resamples``), of the ratings given up to each of ``points`` evenly spaced rating counts
    (in ``created_at`` order); counts at which α is not defined yet are left out."""
    ordered = ratings.sort_values("created_at", kind="stable")
    rows = []
    for n in sorted({int(round(k)) for k in np.linspace(len(ordered) / points, len(ordered), points)}):
        head = ordered.iloc[:n]
        if n < 2 or why_no_agreement(head):
            continue
        matrix = rating_matrix(head)
        with np.errstate(invalid="ignore", divide="ignore"):
            alpha = alpha_of_matrix(matrix)
        if np.isfinite(alpha):   # undefined while the items rated twice all got one value
            with np.errstate(invalid="ignore", divide="ignore"):
                ci = bootstrap_intervals(matrix, n_resamples=n_resamples)
            rows.append({"ratings": n, "annotators": int(head["annotator"].nunique()), "alpha": alpha,
                         "alpha_low": ci["krippendorff_alpha"][0], "alpha_high": ci["krippendorff_alpha"][1],
                         "agreement": mean_offdiagonal(pairwise_agreement_matrix(matrix)),
                         "agreement_low": ci["mean_pairwise_agreement"][0],
                         "agreement_high": ci["mean_pairwise_agreement"][1]})
    return pd.DataFrame(rows, columns=["ratings", "annotators", "alpha", "alpha_low", "alpha_high",
                                       "agreement", "agreement_low", "agreement_high"])


def write_study_report(slug: str, analysis: StudyAnalysis, out_dir: str | Path | None = None, *,
                       now: datetime | None = None) -> Path:
    """Write report.html and its tables into ``exports/<study>/<timestamp>/report/``."""
    return write_report_folder(study_folder(slug, out_dir, now) / "report", slug, analysis)


def write_report_folder(folder: str | Path, slug: str, analysis: StudyAnalysis) -> Path:
    """Write report.html and its tables into ``folder``; returns report.html's path."""
    return write_report(folder, agreement=analysis.agreement, alignment=analysis.alignment,
                        tuning=analysis.tuning, title=f"Study report: {slug}",
                        rater_model=analysis.rater_model, reliability=analysis.reliability,
                        over_time=analysis.over_time, prediction_powered=_report_part(analysis.prediction_powered))


def _report_part(section: Section | None) -> dict | None:
    """A dashboard section as ``write_report``'s ``prediction_powered`` part."""
    if section is None:
        return None
    return {"title": section.title, "text": [text for text in (section.headline, section.text) if text],
            "table": next(iter(section.tables.values()), None)}
