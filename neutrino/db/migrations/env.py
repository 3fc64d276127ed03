"""Alembic environment: one online mode, the URL comes from our config."""
from alembic import context

from neutrino.db.engine import make_engine
from neutrino.db.tables import metadata

config = context.config
url = config.get_main_option("sqlalchemy.url")
if url is None:
    raise RuntimeError("alembic: sqlalchemy.url is not set (neutrino.db.migrate sets it)")
engine = make_engine(url)
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
