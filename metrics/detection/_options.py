"""The options of the detection scores as constraints (:mod:`metrics.core._constraints`): one
table for the public functions (:mod:`metrics.api`) and the scorer behind them
(:mod:`metrics.detection._scoring`). Free of numpy, as the public API's modules are."""

from metrics.core._choices import COMBINATIONS, FN_MODES, INTERPOLATIONS, MAP_PROTOCOLS, SPLITS
from metrics.core._constraints import FRACTION, POSITIVE_FRACTION, Constraint, Options, OrNone

SCORE_OPTIONS: dict[str, Constraint] = {
    "combine": Options(COMBINATIONS), "w": FRACTION, "iou": POSITIVE_FRACTION, "delta": FRACTION, "tau": FRACTION,
    "split": OrNone(Options(SPLITS)), "interpolation": Options(INTERPOLATIONS), "fn_mode": Options(FN_MODES),
    "map_protocol": Options(MAP_PROTOCOLS),
}


def score_options(*names: str) -> dict[str, Constraint]:
    """The part of :data:`SCORE_OPTIONS` a function takes: ``names``.

    >>> score_options("iou")
    {'iou': Interval(low=0, high=1, low_open=True, high_open=False)}
    """
    return {name: SCORE_OPTIONS[name] for name in names}
