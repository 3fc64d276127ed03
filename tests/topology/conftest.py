from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from selenium import webdriver

from tests.browser import chromium


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    with chromium(tmp_path / "chromium") as driver:
        yield driver
