"""HOI detections and their scores: boxes and IoU, the detections arrays, label resolution, standard / SHOE mAP, mF1, miss rates."""
