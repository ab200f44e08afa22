"""Option values shared by the scorers and the command line.

Kept in a module without imports, so a command can declare its arguments (and ``--help`` can
list them) without importing numpy or pandas.
"""

MAP_PROTOCOLS = ("official", "all-point")   # standard mAP conventions (metrics.detection._class_ap)
INTERPOLATIONS = ("none", "all-point")      # SHOE AP (metrics.detection._shoe.shoe_ap)
FN_MODES = ("algorithm2", "eq5")            # SHOE mF1 false negatives (metrics.detection._shoe.shoe_soft_counts)
SPLITS = ("rf_uc", "nf_uc", "uv", "uo")     # HICO-DET zero-shot splits (metrics.datasets.hico_det._vocabulary)
COMBINATIONS = ("arithmetic", "geometric", "min")   # HOI similarity f (metrics.vocab._similarity.combine)
LEVELS = ("nominal", "ordinal", "interval", "ratio")   # Krippendorff's alpha (metrics.study._agreement)
SCALE = (0, 1, 2, 3, 4)                             # SHOE's rating scale
SCALE_MAX = float(max(SCALE))                       # its top: a similarity of 1 is a rating of 4
SETTINGS = ("full_detection", "human_box", "image_level")   # CrossHOI-Bench (metrics.crosshoi._mcq)
