"""``flat`` networks: a whole physical network, untagged, for one network.

Admins create them as provider networks only; project networks never get a
flat segment. One row per physical network in use makes a second flat
network on the same physnet a conflict, across servers.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins.ml2 import mtu, ranges
from neutrino.plugins.ml2.driver_api import NETWORK_TYPE, PHYSICAL_NETWORK, Segment, TypeDriver


def _invalid(msg: str) -> errors.InvalidInput:
    return errors.InvalidInput(error_message=msg)


class FlatTypeDriver(TypeDriver):
    network_type = "flat"

    def __init__(self, conf: Any) -> None:
        super().__init__(conf)
        names = [n.strip() for n in conf.ml2_type_flat.flat_networks if n.strip()]
        # None: any physical network ('*'); an empty list: flat disabled.
        self.flat_networks: list[str] | None = None if "*" in names else names
        self.physnet_mtus = ranges.physnet_mtus(conf.ml2.physical_network_mtus)

    def is_partial_segment(self, segment: Segment) -> bool:
        return False

    def validate_provider_segment(self, segment: Segment) -> None:
        physnet = segment.physical_network
        if not physnet:
            raise _invalid("physical_network required for flat provider network")
        if self.flat_networks is not None and not self.flat_networks:
            raise _invalid("Flat provider networks are disabled")
        if self.flat_networks and physnet not in self.flat_networks:
            raise _invalid(f"physical_network '{physnet}' unknown for flat provider network")
        for key, value in segment.items():
            if value is not None and key not in (NETWORK_TYPE, PHYSICAL_NETWORK):
                raise _invalid(f"{key} prohibited for flat provider network")

    def reserve_provider_segment(self, conn: Connection, segment: Segment,
                                 project_id: str | None = None) -> Segment:
        physnet = segment.physical_network
        table = t.ml2_flat_allocations
        taken = conn.execute(sa.select(table.c.physical_network)
                             .where(table.c.physical_network == physnet)).first()
        if taken is not None:
            raise errors.FlatNetworkInUse(physical_network=physnet)
        # A concurrent insert of the same physnet violates the primary key,
        # which reruns the operation; the rerun then reports the conflict.
        conn.execute(sa.insert(table).values(physical_network=physnet))
        return Segment(self.network_type, physnet)

    def allocate_tenant_segment(self, conn: Connection,
                                project_id: str | None = None) -> Segment | None:
        return None

    def release_segment(self, conn: Connection, segment: Segment) -> None:
        table = t.ml2_flat_allocations
        conn.execute(sa.delete(table).where(
            table.c.physical_network == segment.physical_network))

    def get_mtu(self, physical_network: str | None) -> int:
        return mtu.physical(self.conf, self.physnet_mtus, physical_network)
