"""``local`` networks: connectivity within one host, no segment to allocate."""
from __future__ import annotations

from sqlalchemy import Connection

from neutrino import errors
from neutrino.plugins.ml2.driver_api import NETWORK_TYPE, Segment, TypeDriver


class LocalTypeDriver(TypeDriver):
    network_type = "local"

    def is_partial_segment(self, segment: Segment) -> bool:
        return False

    def validate_provider_segment(self, segment: Segment) -> None:
        for key, value in segment.items():
            if value is not None and key != NETWORK_TYPE:
                raise errors.InvalidInput(
                    error_message=f"{key} prohibited for local provider network")

    def reserve_provider_segment(self, conn: Connection, segment: Segment,
                                 project_id: str | None = None) -> Segment:
        return Segment(self.network_type)

    def allocate_tenant_segment(self, conn: Connection,
                                project_id: str | None = None) -> Segment | None:
        return Segment(self.network_type)

    def release_segment(self, conn: Connection, segment: Segment) -> None:
        pass

    def get_mtu(self, physical_network: str | None) -> int:
        # No wire: the MTU is the deployment's (the caller's default).
        return 0
