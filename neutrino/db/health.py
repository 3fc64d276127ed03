"""Whether the database answers, for ``/healthcheck``: a fresh connection
(not one of the pool's, which may outlive the database's reachability)
reading the schema's version, bounded by a connection timeout."""
from __future__ import annotations

import os
from typing import Any

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.pool import NullPool

from neutrino.db.engine import _sqlite_file, normalise_url


class Reachability:
    """A check of one database, called as often as ``/healthcheck`` asks."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = normalise_url(url)
        self.sqlite_file = _sqlite_file(self.url) if self.url.startswith("sqlite") else ""
        self.engine: Engine = create_engine(self.url, poolclass=NullPool,
                                            connect_args=_timeout_args(self.url, timeout))

    def __call__(self) -> str | None:
        """None when the database answers, else why it does not."""
        # SQLite would create a missing file (an empty database) and call it reachable.
        if self.sqlite_file and not os.path.exists(self.sqlite_file):
            return f"no database file at {self.sqlite_file}"
        with self.engine.connect() as conn:
            conn.execute(text("SELECT version_num FROM alembic_version")).first()
        return None


def _timeout_args(url: str, timeout: float) -> dict[str, Any]:
    if url.startswith("sqlite"):
        return {"timeout": timeout}
    # libpq and the MySQL clients count whole seconds, libpq at least two.
    return {"connect_timeout": max(2, int(timeout + 0.5))}
