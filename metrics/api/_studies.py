"""The functions of rating studies: annotator agreement, Krippendorff's alpha, pairwise
agreement, w tuning, recalibration (plain and prediction-powered), and the rated items they share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from metrics.api._results import Result, _items, _matrix, _ratings, hidden
from metrics.core._choices import SCALE
from metrics.core._constraints import Boolean, validate_params
from metrics.study._options import (
    AGREEMENT_OPTIONS,
    PPI_RECALIBRATION_OPTIONS,
    RECALIBRATION_OPTIONS,
    TUNING_OPTIONS,
)

if TYPE_CHECKING:
    import pandas as pd

    from metrics.study._agreement import AgreementReport
    from metrics.vocab._similarity import SimilarityMatrix


@validate_params({"need_similarities": Boolean()})
def rated_items(ratings: pd.DataFrame | str | Path, items: pd.DataFrame | str | Path, *,
                verb_sim: SimilarityMatrix | str | Path | None = None,
                object_sim: SimilarityMatrix | str | Path | None = None,
                need_similarities: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(ratings, rated items)``: the items that have ratings, with ``human_mean``,
    ``n_ratings`` and (with ``need_similarities``) ``verb_sim`` / ``object_sim``, looked up in
    the matrices where the items lack them. Every rated item must be in ``items``."""
    from metrics.study._study_items import check_rated_items, component_similarities, join_ratings
    ratings, ratings_source = _ratings(ratings)
    items, items_source = _items(items)
    check_rated_items(items, ratings, items_source, ratings_source)
    if need_similarities:
        items = component_similarities(items, _matrix(verb_sim), _matrix(object_sim))
    return ratings, join_ratings(items, ratings)


@validate_params(AGREEMENT_OPTIONS)
def annotator_agreement(ratings: pd.DataFrame | str | Path, *, level: str = "ordinal", n_resamples: int = 1000,
                        seed: int = 0) -> AgreementReport:
    """Inter-annotator agreement of a rating study (SHOE §4.3, supp. §5.2–5.3, §6.3):
    Krippendorff's alpha at ``level``, mean pairwise Eq. 13 agreement, quadratic weighted
    kappa and Spearman ρ, with bootstrap intervals (``n_resamples``, 0 for none).

    ``ratings``: ``ratings.csv`` or its DataFrame (``item_id, annotator, rating``). Returns an
    :class:`~metrics.study._agreement.AgreementReport`, whose ``to_dict()`` is the ``agreement``
    command's result and whose tables feed the report.

    >>> import pandas as pd
    >>> r = pd.DataFrame({"item_id": list("aabbcc"), "annotator": ["x", "y"] * 3, "rating": [0, 0, 2, 3, 4, 4]})
    >>> round(annotator_agreement(r, n_resamples=0).mean_pairwise_agreement, 4)
    0.9167
    """
    from metrics.study._agreement import agreement_report
    return agreement_report(_ratings(ratings)[0], level=level, n_resamples=n_resamples, seed=seed)


@validate_params({"level": AGREEMENT_OPTIONS["level"]})
def krippendorff_alpha(ratings: pd.DataFrame | str | Path, *, level: str = "ordinal",
                       scale: Sequence[int] = SCALE) -> float:
    """Krippendorff's alpha of a rating study at ``level`` (nominal, ordinal, interval,
    ratio) over the values of ``scale``; items rated once are left out.

    >>> import pandas as pd
    >>> r = pd.DataFrame({"item_id": list("aabbcc"), "annotator": ["x", "y"] * 3, "rating": [0, 0, 2, 2, 4, 4]})
    >>> krippendorff_alpha(r)
    1.0
    """
    from metrics.study._agreement import alpha_of_matrix as alpha
    from metrics.study._agreement import rating_matrix
    return alpha(rating_matrix(_ratings(ratings)[0]), level=level, scale=scale)


@dataclass(frozen=True)
class PairwiseAgreement(Result):
    """SHOE Eq. 13 agreement, ``1 − |r_i − r_j| / (max − min of the scale)``, of every
    annotator pair over the items both rated: the mean over pairs and the annotator ×
    annotator table."""

    mean_pairwise_agreement: float
    pairwise_agreement: dict


def pairwise_agreement(ratings: pd.DataFrame | str | Path, *, scale: Sequence[int] = SCALE) -> PairwiseAgreement:
    """Eq. 13 agreement of every pair of annotators (``ratings`` as in
    :func:`annotator_agreement`).

    >>> import pandas as pd
    >>> r = pd.DataFrame({"item_id": list("aabb"), "annotator": ["x", "y"] * 2, "rating": [0, 1, 4, 4]})
    >>> pairwise_agreement(r).mean_pairwise_agreement
    0.875
    """
    from metrics.study._agreement import mean_offdiagonal, rating_matrix, table_dict
    from metrics.study._agreement import pairwise_agreement_matrix as agreement
    table = agreement(rating_matrix(_ratings(ratings)[0]), scale_max=float(max(scale) - min(scale)))
    return PairwiseAgreement(mean_pairwise_agreement=mean_offdiagonal(table), pairwise_agreement=table_dict(table))


@dataclass(frozen=True)
class WTuning(Result):
    """The ``tune-w`` command's result: the verb weight w minimizing the mean absolute error
    against the mean human rating (SHOE §4.5, Eq. 14), per category and overall."""

    w_overall: float
    mae_overall: float
    w_by_category: dict
    mae_by_category: dict
    n_by_category: dict
    curve: dict
    agreement_tuned: float
    agreement_w05: float
    n_items: int = hidden()


@validate_params(TUNING_OPTIONS)
def tune_w(ratings: pd.DataFrame | str | Path, items: pd.DataFrame | str | Path, *,
           verb_sim: SimilarityMatrix | str | Path | None = None,
           object_sim: SimilarityMatrix | str | Path | None = None, step: float = 0.001) -> WTuning:
    """Per-category verb weight w of the HOI similarity (SHOE §4.5, Eq. 14; exact optimum,
    MAE curve on a grid of ``step``). ``ratings`` / ``items``: ``ratings.csv`` / ``items.csv``
    or their DataFrames; ``verb_sim`` / ``object_sim`` fill ``verb_sim`` / ``object_sim`` where
    the items lack them.

    >>> import pandas as pd
    >>> items = pd.DataFrame({"item_id": ["a", "b"], "verb_sim": [1.0, 0.0], "object_sim": [0.0, 1.0]})
    >>> ratings = pd.DataFrame({"item_id": ["a", "b"], "annotator": ["x", "x"], "rating": [1, 3]})
    >>> tune_w(ratings, items).w_overall
    0.25
    """
    from metrics.study._tuning import tune_w_by_category as tune
    _, rated = rated_items(ratings, items, verb_sim=verb_sim, object_sim=object_sim)
    return WTuning.from_dict(tune(rated, step=step), n_items=len(rated))


@dataclass(frozen=True)
class Recalibration(Result):
    """The ``recalibrate`` command's result (held-out agreement ``before`` / ``after``, the
    method and its parameters); the new matrices are ``verb`` and ``object``, and
    :meth:`save` writes them as the command does."""

    before: dict
    after: dict
    method: str
    parameters: dict
    folds: list
    n_items: int
    n_ratings: int
    verb: SimilarityMatrix = hidden()
    object: SimilarityMatrix = hidden()
    details: dict = hidden()

    def save(self, folder: str | Path) -> list[str]:
        """Write ``{verb,object}_recalibrated.{npz,csv}`` into ``folder``; returns the paths."""
        folder = Path(folder)
        return [str(matrix.save(folder / f"{role}_recalibrated{suffix}"))
                for role, matrix in (("verb", self.verb), ("object", self.object)) for suffix in (".npz", ".csv")]


@validate_params(RECALIBRATION_OPTIONS)
def recalibrate(ratings: pd.DataFrame | str | Path, items: pd.DataFrame | str | Path,
                verb_sim: SimilarityMatrix | str | Path, object_sim: SimilarityMatrix | str | Path, *,
                w: float = 0.5, prior_strength: float = 5.0, folds: int = 5, seed: int = 0,
                study: str | None = None) -> Recalibration:
    """New verb and object similarity matrices from the ratings of an HOI-similarity study
    (isotonic calibration of every entry, shrinkage of rated entries toward the human evidence;
    ``metrics.study._recalibration``), with ``folds``-fold cross-validated agreement before and after.
    ``study`` names the study in the matrices' provenance (default: the ratings' ``study``
    column).

    >>> from metrics.vocab._baseline import load_default
    >>> import pandas as pd
    >>> items = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "category": [2, 2, 1, 1],
    ...                       "gt_verb": ["ride", "ride", "hold", "hold"], "gt_object": ["horse", "bicycle", "cup", "cup"],
    ...                       "pred_verb": ["straddle", "sit_on", "hold", "hold"],
    ...                       "pred_object": ["horse", "bicycle", "bowl", "bottle"]})
    >>> ratings = pd.DataFrame({"item_id": list("abcd"), "annotator": "x", "rating": [4, 2, 3, 2]})
    >>> r = recalibrate(ratings, items, load_default("v"), load_default("n"), folds=2)
    >>> sorted(r.to_dict())
    ['after', 'before', 'folds', 'method', 'n_items', 'n_ratings', 'parameters']
    """
    from metrics.study._recalibration import recalibrate_matrices as fit
    ratings, rated = rated_items(ratings, items, need_similarities=False)
    if not study and "study" in ratings.columns and len(ratings):
        study = str(ratings["study"].iloc[0])
    result = fit(rated, _matrix(verb_sim), _matrix(object_sim), w=w, prior_strength=prior_strength, folds=folds,
                 seed=seed, study=study)
    return Recalibration.from_dict(result, verb=result["verb"], object=result["object"], details=result)


@dataclass(frozen=True)
class PPIRecalibration(Result):
    """The ``recalibrate --estimator ppi`` command's result: per matrix (``verb``, ``object``)
    the summary of each LLM level (entries, human-rated entries, λ, the mean PPI estimate beside
    the human-only mean and its interval, effective n); the new matrices are ``verb_matrix`` and
    ``object_matrix``, each entry's interval table ``intervals``, and :meth:`save` writes them."""

    method: str
    parameters: dict
    by_level: dict
    n_items: int
    n_ratings: int
    verb_matrix: SimilarityMatrix = hidden()
    object_matrix: SimilarityMatrix = hidden()
    intervals: dict = hidden()

    def save(self, folder: str | Path) -> list[str]:
        """Write ``{verb,object}_recalibrated.{npz,csv}`` and, beside each matrix,
        ``{verb,object}_recalibrated_intervals.csv`` (one row per entry); returns the paths."""
        from metrics.core._jsonio import write_text_atomic
        folder = Path(folder)
        paths = [str(matrix.save(folder / f"{role}_recalibrated{suffix}"))
                 for role, matrix in (("verb", self.verb_matrix), ("object", self.object_matrix))
                 for suffix in (".npz", ".csv")]
        for role, table in self.intervals.items():
            path = folder / f"{role}_recalibrated_intervals.csv"
            write_text_atomic(path, table.to_csv(index=False, float_format="%.6g"))
            paths.append(str(path))
        return paths


@validate_params(PPI_RECALIBRATION_OPTIONS)
def recalibrate_ppi(ratings: pd.DataFrame | str | Path, items: pd.DataFrame | str | Path,
                    verb_sim: SimilarityMatrix | str | Path, object_sim: SimilarityMatrix | str | Path, *,
                    w: float = 0.5, confidence: float = 0.95, study: str | None = None) -> PPIRecalibration:
    """New verb and object matrices from prediction-powered estimates
    (``metrics.study._recalibration.recalibrate_matrices_ppi``): ``verb_sim`` / ``object_sim`` are the LLM
    ratings of every pair, the ratings of an HOI-similarity study the human evidence; every entry
    gets its expected human similarity with an interval, beside the human-only estimate of its
    LLM level.

    >>> from metrics.vocab._baseline import load_default
    >>> import pandas as pd
    >>> items = pd.DataFrame({"item_id": list("abcd"), "category": [2, 2, 1, 1],
    ...                       "gt_verb": ["ride", "ride", "hold", "hold"], "gt_object": ["horse", "bicycle", "cup", "cup"],
    ...                       "pred_verb": ["straddle", "sit_on", "hold", "hold"],
    ...                       "pred_object": ["horse", "bicycle", "bowl", "bottle"]})
    >>> ratings = pd.DataFrame({"item_id": list("abcd"), "annotator": "x", "rating": [4, 2, 3, 2]})
    >>> r = recalibrate_ppi(ratings, items, load_default("v"), load_default("n"))
    >>> sorted(r.to_dict()), sorted(r.intervals)
    (['by_level', 'method', 'n_items', 'n_ratings', 'parameters'], ['object', 'verb'])
    """
    from metrics.study._recalibration import recalibrate_matrices_ppi as fit
    ratings, rated = rated_items(ratings, items, need_similarities=False)
    if not study and "study" in ratings.columns and len(ratings):
        study = str(ratings["study"].iloc[0])
    result = fit(rated, _matrix(verb_sim), _matrix(object_sim), w=w, confidence=confidence, study=study)
    return PPIRecalibration.from_dict(result, verb_matrix=result["verb"], object_matrix=result["object"],
                                      intervals=result["intervals"])
