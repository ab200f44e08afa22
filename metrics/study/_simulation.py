"""Simulated raters for pilots and tests (issue: analysis).

A rater's rating of an item is its latent similarity on 0–4, passed through the rater's bias,
plus Gaussian noise, rounded and clipped to the scale:

- ``strict``: latent − shift; ``lenient``: latent + shift; ``mid``: 2 + squeeze·(latent − 2)
  (uses the middle of the scale); ``neutral``: latent.
- ``random``: a uniform draw from the scale, whatever the item; ``constant``: always 2 (the
  careless raters a rater model should flag).

``noise`` and ``shift`` are one number for every rater or one per rater.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics.core._choices import SCALE, SCALE_MAX
from metrics.core._constraints import FRACTION, RANDOM_SEED, Each, Options, OrNone, Whole, validate_params
from metrics.core._errors import InputError

BIAS_PROFILES = ("neutral", "strict", "lenient", "mid")
PROFILES = BIAS_PROFILES + ("random", "constant")


def rater_profiles(k: int) -> list[str]:
    """Profiles of k simulated annotators: neutral, strict, lenient, mid, neutral, ..."""
    return [BIAS_PROFILES[i % len(BIAS_PROFILES)] for i in range(k)]


@validate_params({"k": Whole(1), "squeeze": FRACTION, "seed": RANDOM_SEED, "profiles": OrNone(Each(Options(PROFILES))),
                  "raters_per_item": OrNone(Whole(1))})
def simulate_ratings(item_ids, latent, *, k: int = 5, noise=0.6, shift=0.5,
                     squeeze: float = 0.6, seed: int = 0, profiles: list[str] | None = None,
                     raters_per_item: int | None = None) -> pd.DataFrame:
    """Long ratings (``item_id, annotator, rating, profile``) of k simulated annotators.

    ``latent`` is each item's true similarity on 0–4. With ``raters_per_item`` < k each item
    is rated by a random subset of that size (missing ratings, as in a real study).

    >>> r = simulate_ratings(["a", "b"], [0.0, 4.0], k=2, noise=0.0, profiles=["neutral", "neutral"])
    >>> r["rating"].tolist()
    [0, 0, 4, 4]
    """
    item_ids = np.asarray(item_ids, dtype=object)
    latent = np.asarray(latent, dtype=float)
    if len(item_ids) != len(latent):
        raise InputError("item_ids and latent differ in length")
    profiles = profiles or rater_profiles(k)
    if len(profiles) != k:
        raise InputError(f"profiles must be {k} of {', '.join(PROFILES)}")
    noise, shift = (np.broadcast_to(np.asarray(x, float), (k,)) for x in (noise, shift))
    rng = np.random.default_rng(seed)
    biased = np.empty((len(latent), k))
    for a, profile in enumerate(profiles):
        biased[:, a] = {"strict": latent - shift[a], "lenient": latent + shift[a],
                        "mid": SCALE_MAX / 2 + squeeze * (latent - SCALE_MAX / 2)}.get(profile, latent)
    ratings = np.clip(np.rint(biased + rng.normal(0.0, 1.0, biased.shape) * noise), min(SCALE), max(SCALE)).astype(int)
    for a, profile in enumerate(profiles):
        if profile == "random":
            ratings[:, a] = rng.integers(min(SCALE), max(SCALE) + 1, len(latent))
        elif profile == "constant":
            ratings[:, a] = 2
    rated = np.ones_like(ratings, dtype=bool)
    if raters_per_item is not None and raters_per_item < k:
        order = np.argsort(rng.random(ratings.shape), axis=1)
        rated = order < raters_per_item
    rows, cols = np.nonzero(rated)
    return pd.DataFrame({"item_id": item_ids[rows].astype(str),
                         "annotator": [f"sim{c + 1}" for c in cols],
                         "rating": ratings[rows, cols],
                         "profile": [profiles[c] for c in cols]})
