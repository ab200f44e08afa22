"""Every end-to-end test runs on its own database and export folder (a module whose tests share
one server overrides ``own_database``); the browser tests of a module share one Chromium."""

import pytest


@pytest.fixture(autouse=True)
def own_database(isolated_database):
    yield


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for a module's browser tests; each test gets a fresh tab of it
    (``test_browser.browser``)."""
    from browserhelpers import start_chromium

    driver = start_chromium()
    yield driver
    driver.quit()
