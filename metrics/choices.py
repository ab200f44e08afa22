"""Option values shared by the scorers and the command line.

Kept in a module without imports, so a command can declare its arguments (and ``--help`` can
list them) without importing numpy or pandas.
"""

MAP_PROTOCOLS = ("official", "all-point")   # standard mAP conventions (metrics.hico_eval)
INTERPOLATIONS = ("none", "all-point")      # SHOE AP (metrics.scoring.shoe_ap)
FN_MODES = ("algorithm2", "eq5")            # SHOE mF1 false negatives (metrics.scoring.shoe_f1)
SPLITS = ("rf_uc", "nf_uc", "uv", "uo")     # HICO-DET zero-shot splits (metrics.vocabulary)
COMBINATIONS = ("arithmetic", "geometric", "min")   # HOI similarity f (metrics.similarity.combine)
LEVELS = ("nominal", "ordinal", "interval", "ratio")   # Krippendorff's alpha (metrics.agreement)
SCALE = (0, 1, 2, 3, 4)                             # SHOE's rating scale
SETTINGS = ("full_detection", "human_box", "image_level")   # CrossHOI-Bench (metrics.mcq)
