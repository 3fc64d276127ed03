"""Fixtures for the ML2 tests: configurations written as upstream's files."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest


@pytest.fixture
def make_conf(tmp_path: Path) -> Callable[[str], Any]:
    """``make_conf(ini_text)`` -> ConfigOpts read from that file, as the server reads it."""
    from neutrino.service import make_conf as _make

    def build(text: str = "") -> Any:
        path = tmp_path / f"ml2-{len(list(tmp_path.glob('ml2-*.ini')))}.ini"
        path.write_text(text)
        return _make(["--config-file", str(path)])
    return build
