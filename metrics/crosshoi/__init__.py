"""CrossHOI-Bench multiple-choice scoring (the score is :mod:`metrics`'s ``crosshoi_scores``)."""

from metrics._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("Question", "mcq_scores", "option_class", "parse_bench", "read_answers", "read_bench"), "_mcq"),
})
