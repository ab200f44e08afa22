"""The options of the rating-study functions as constraints (:mod:`metrics.core._constraints`): one
table per family, for the public functions (:mod:`metrics.api`) and the functions behind them. Free
of numpy, as the public API's modules are."""

from metrics.core._choices import LEVELS
from metrics.core._constraints import (
    FRACTION,
    OPEN_FRACTION,
    POSITIVE,
    RANDOM_SEED,
    RESAMPLES,
    Constraint,
    Interval,
    Options,
    OrNone,
    Whole,
)

MIN_STEP, MAX_STEP = 0.00001, 0.5   # grid steps of the MAE curve (w tuning)
MAX_PRIOR_STRENGTH = 1_000_000      # pseudo-ratings of the recalibration's prior
MAX_FOLDS = 1000                    # cross-validation folds of the recalibration

AGREEMENT_OPTIONS: dict[str, Constraint] = {"level": Options(LEVELS), "n_resamples": RESAMPLES, "seed": RANDOM_SEED}
TUNING_OPTIONS: dict[str, Constraint] = {"step": Interval(MIN_STEP, MAX_STEP)}
# w: the share of a rating credited to the verb, strictly between 0 and 1 (both matrices learn)
RECALIBRATION_OPTIONS: dict[str, Constraint] = {
    "w": OPEN_FRACTION, "prior_strength": Interval(0, MAX_PRIOR_STRENGTH), "folds": Whole(2, MAX_FOLDS),
    "seed": RANDOM_SEED}
PPI_RECALIBRATION_OPTIONS: dict[str, Constraint] = {"w": OPEN_FRACTION, "confidence": OPEN_FRACTION}
# the prediction-powered estimates: lam a fixed power-tuning λ, None to tune it
PPI_OPTIONS: dict[str, Constraint] = {"confidence": OPEN_FRACTION, "lam": OrNone(FRACTION)}
# the draw of items for humans (active inference); a budget above the number of items is refused
# with the items (metrics.study._ppi_active.active_probabilities)
ACTIVE_OPTIONS: dict[str, Constraint] = {"budget": POSITIVE, "floor": FRACTION,
                                         "allocation": Options(("equal", "proportional"))}
