"""A study's records in the database: create, invite, pause and close (``studies``), the export
tables and files (``exports``), simulated raters (``simulate``)."""
