"""Analysis of rating studies: agreement, reliability, the rater model, alignment, w tuning, recalibration, simulated raters, reports."""
