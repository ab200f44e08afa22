"""Every end-to-end test runs on its own database and export folder (a module whose tests share
one server overrides ``own_database``)."""

import pytest


@pytest.fixture(autouse=True)
def own_database(isolated_database):
    yield
