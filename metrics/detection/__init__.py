"""HOI detections and their scores: boxes and IoU, the detections arrays, label resolution,
standard / SHOE mAP, mF1, miss rates (the scores themselves are :mod:`metrics`'s
``score_detections`` and friends; ``score_dict`` is the ``score`` command's JSON as a dict)."""

from metrics._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("Detections", "write_jsonl", "COCO_OBJECT_IDS"), "_detections"),
    "read_detections": "_detections_fast",
    **dict.fromkeys(("box_iou", "parse_box"), "_boxes"),
    **dict.fromkeys(("standard_ap", "class_ap", "eleven_point_ap"), "_ap"),
    "score_dict": "_scoring",
})
