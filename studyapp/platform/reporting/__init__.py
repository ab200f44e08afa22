"""What a researcher reads: the study analysis and HTML report (``analysis``, ``report_cache``), the
dashboard (``dashboard``), prediction-powered estimates (``ppi_estimates``) and the home page's summary
(``overview``)."""
