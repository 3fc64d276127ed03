"""router_flavor: routers' flavor_id (l3-flavors)

Revision ID: 0035_router_flavor
Revises: 0034_external_networks
"""
import sqlalchemy as sa
from alembic import op

revision = '0035_router_flavor'
down_revision = '0034_external_networks'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == 'sqlite':
        # SQLite adds a column with its key inline only; a batch rebuild of
        # ``routers`` would touch every row referring to it.
        op.execute('ALTER TABLE routers ADD COLUMN flavor_id VARCHAR(36) CONSTRAINT '
                   'fk_routers_flavor_id_flavors REFERENCES flavors (id)')
        return
    op.add_column('routers', sa.Column(
        'flavor_id', sa.String(length=36),
        sa.ForeignKey('flavors.id', name='fk_routers_flavor_id_flavors'), nullable=True))


def downgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        op.drop_constraint('fk_routers_flavor_id_flavors', 'routers', type_='foreignkey')
    op.drop_column('routers', 'flavor_id')
