"""CrossHOI-Bench multiple-choice scoring."""
