"""The quotas API's operations, each in a transaction of its own.

The API layer asks for limits, usage and changes; the plugin layer opens
the transactions around the quota engine (reads together, writes retried
on a lost race), as it does for every other resource.
"""
from __future__ import annotations

from typing import Any


class Quotas:
    def __init__(self, core: Any) -> None:
        self.core = core

    @property
    def engine(self) -> Any:
        return self.core.quota

    def names(self) -> list[str]:
        return list(self.engine.names())

    def defaults(self) -> dict[str, int]:
        return self.engine.defaults()

    def limits(self, project_id: str) -> dict[str, int]:
        with self.core.db.reader() as conn:
            return self.engine.limits(conn, project_id)

    def limits_by_project(self) -> dict[str, dict[str, int]]:
        """The limits of every project that has limits of its own."""
        with self.core.db.reader() as conn:
            return {project: self.engine.limits(conn, project)
                    for project in self.engine.projects_with_quotas(conn)}

    def details(self, project_id: str) -> dict[str, dict[str, int]]:
        """Each limit with the project's usage, read in one transaction."""
        with self.core.db.reader() as conn:
            limits = self.engine.limits(conn, project_id)
            return {name: {"limit": limit, "used": self.engine.usage(conn, project_id, name),
                           "reserved": 0} for name, limit in limits.items()}

    def set_limits(self, project_id: str, limits: dict[str, int],
                   check_limit: bool) -> dict[str, int]:
        def op(conn: Any) -> dict[str, int]:
            self.engine.set_limits(conn, project_id, limits, check_limit)
            return self.engine.limits(conn, project_id)
        return self.core.write(op)

    def reset(self, project_id: str) -> None:
        self.core.write(lambda conn: self.engine.reset(conn, project_id))
