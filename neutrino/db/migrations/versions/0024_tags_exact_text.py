"""tags: compared as exact text on MariaDB/MySQL, as on SQLite and PostgreSQL

Revision ID: 0024_tags_exact_text
Revises: 0023_quota_lock_generation
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0024_tags_exact_text'
down_revision = '0023_quota_lock_generation'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name not in ('mysql', 'mariadb'):
        return
    op.alter_column('tags', 'tag', existing_type=sa.String(length=255), existing_nullable=False,
                    type_=mysql.VARCHAR(255, charset='utf8mb4', collation='utf8mb4_bin'))


def downgrade() -> None:
    if op.get_bind().dialect.name not in ('mysql', 'mariadb'):
        return
    op.alter_column('tags', 'tag', existing_nullable=False, type_=sa.String(length=255),
                    existing_type=mysql.VARCHAR(255, charset='utf8mb4', collation='utf8mb4_bin'))
