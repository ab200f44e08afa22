"""Every platform test runs on its own database and export folder."""

import pytest


@pytest.fixture(autouse=True)
def own_database(isolated_database):
    yield
