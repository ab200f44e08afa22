"""Running a server: backups (``backup``), recalibrated matrix versions (``matrix_versions``) and
scoring models with them (``scoring``)."""
