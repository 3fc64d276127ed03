"""Schema upgrades with Alembic, configured in code (no alembic.ini to ship)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

from neutrino.db.engine import make_engine, normalise_url

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(url: str) -> Any:
    # deferred: Alembic (and its scripts) only when migrating; servers check the schema without it
    from alembic.config import Config
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    engine = make_engine(url)  # creates the SQLite directory when needed
    engine.dispose()
    # deferred: Alembic (and its scripts) only when migrating; servers check the schema without it
    from alembic import command
    command.upgrade(alembic_config(url), revision)


def current(url: str) -> str | None:
    """The schema's revision, read from ``alembic_version`` directly: Alembic
    is only loaded when there is something to upgrade."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table("alembic_version"):
                return None
            found = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    finally:
        engine.dispose()
    return found[0] if len(found) == 1 else None


def describe(revision: str | None) -> str:
    """A revision as ``db current`` and the server's refusal name it: a
    database without neutrino's schema is "empty", not "None"."""
    return revision if revision is not None else "empty (no neutrino schema)"


def head() -> str | None:
    # deferred: Alembic (and its scripts) only when migrating; servers check the schema without it
    from alembic.script import ScriptDirectory
    return ScriptDirectory(str(MIGRATIONS)).get_current_head()


def newest_script() -> str:
    """The newest migration by its file name, which is its revision id:
    the scripts form one chain numbered in order (a test holds ``head()`` to
    it), so a server can tell an up-to-date schema without loading Alembic
    and every script, a quarter of its start-up."""
    return max(p.stem for p in (MIGRATIONS / "versions").glob("[0-9]*.py"))


def is_current(url: str) -> bool:
    """Whether the database's schema is the newest, without Alembic."""
    return current(url) == newest_script()
