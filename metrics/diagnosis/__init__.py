"""Diag-HOI: error diagnosis of HOI detectors and the oracle mAP gains, with its report."""
