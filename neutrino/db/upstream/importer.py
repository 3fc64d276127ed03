"""``neutrino db import``: an upstream Neutron database into an empty
neutrino one.

The source is only read (one read-only snapshot); the target is migrated
to head, must hold nothing but what the migrations seed, and gets every
row in one transaction, so a failed import leaves it as empty as it was
and can simply be run again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from neutrino.db import migrate
from neutrino.db import tables as t
from neutrino.db.engine import normalise_url
from neutrino.db.upstream import rules
from neutrino.db.upstream.source import Source

# Rows the migrations write themselves, which upstream's replace.
SEEDED = {"securitygroupdefaultrules"}


class ImportRefused(Exception):
    """Why the import did not start; ``problems`` lists each reason."""

    def __init__(self, summary: str, problems: list[str]) -> None:
        super().__init__(summary + "".join(f"\n  - {p}" for p in problems))
        self.problems = problems


@dataclass
class Report:
    copied: dict[str, int] = field(default_factory=dict)  # neutrino table -> rows
    skipped: list[str] = field(default_factory=list)  # what --skip-unsupported left behind


def unsupported(source: Source) -> list[str]:
    """What the source holds that neutrino cannot carry, one line each."""
    found = []
    known = rules.carried() | set(rules.DERIVED)
    for name in sorted(source.meta.tables):
        if name not in known:
            count = source.count(name)
            if count:
                found.append(f"table {name}: {count} row(s) neutrino has no place for")
    for table, column, meaning in rules.ROW_CHECKS:
        if column in source.columns(table):
            used = [r for r in source.rows(table) if r[column]]
            if used:
                found.append(f"{meaning} ({table}.{column}): {len(used)} row(s)")
    return found


def _check_target(conn: sa.Connection) -> None:
    busy = []
    for table in t.metadata.sorted_tables:
        if table.name in SEEDED:
            continue
        if conn.execute(sa.select(sa.literal(1)).select_from(table).limit(1)).first():
            busy.append(table.name)
    if busy:
        raise ImportRefused("the target database is not empty (import only into a new one):",
                            [f"table {name} has rows" for name in busy])


def _by_columns(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Rows in groups that name the same columns: one executemany each
    (a QoS rule of each type sets different ones)."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(sorted(row)), []).append(row)
    return list(groups.values())


def run(source_url: str, target_url: str, skip_unsupported: bool = False) -> Report:
    """Copy everything from ``source_url`` (upstream Neutron) into
    ``target_url`` (neutrino, empty)."""
    source = Source(source_url)
    try:
        if not source.has("standardattributes") or not source.has("networks"):
            raise ImportRefused("the source is not an upstream Neutron database:",
                                ["no standardattributes or networks table"])
        report = Report()
        problems = unsupported(source)
        if problems and not skip_unsupported:
            raise ImportRefused("the source holds what neutrino cannot carry "
                                "(--skip-unsupported leaves it behind):", problems)
        report.skipped = problems
        migrate.upgrade(target_url)
        engine = sa.create_engine(normalise_url(target_url))
        try:
            with engine.begin() as conn:
                _check_target(conn)
                for table in t.metadata.sorted_tables:
                    rows = rules.rows_for(table, source)
                    if table.name in SEEDED and rows:
                        conn.execute(table.delete())
                    for group in _by_columns(rows):
                        conn.execute(table.insert(), group)
                    report.copied[table.name] = len(rows)
        finally:
            engine.dispose()
        return report
    finally:
        source.close()
