"""A real browser for the tests of the topology page: Debian's headless
``chromium`` driven through ``chromium-driver`` by selenium. A machine
without them fails these tests (``make system-deps`` installs them)."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# Screenshots the tests take, kept after the run (ignored by git).
ARTEFACTS = Path(__file__).resolve().parents[1] / "test-artefacts"


@contextlib.contextmanager
def chromium(profile: Path) -> Iterator[webdriver.Chrome]:
    """A headless chromium with a profile of its own, quit at the end."""
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1900,1000", f"--user-data-dir={profile}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
