"""Alembic environment: one online mode, the URL comes from our config."""
from alembic import context

from neutrino.db.engine import make_engine
from neutrino.db.tables import metadata

config = context.config
engine = make_engine(config.get_main_option("sqlalchemy.url"))
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
