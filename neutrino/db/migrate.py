"""Schema upgrades with Alembic, configured in code (no alembic.ini to ship)."""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from neutrino.db.engine import normalise_url

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    from neutrino.db.engine import make_engine
    engine = make_engine(url)  # creates the SQLite directory when needed
    engine.dispose()
    command.upgrade(alembic_config(url), revision)


def current(url: str) -> str | None:
    from alembic.runtime.migration import MigrationContext
    from neutrino.db.engine import make_engine
    engine = make_engine(url)
    with engine.connect() as conn:
        rev = MigrationContext.configure(conn).get_current_revision()
    engine.dispose()
    return rev


def head() -> str | None:
    from alembic.script import ScriptDirectory
    return ScriptDirectory(str(MIGRATIONS)).get_current_head()
