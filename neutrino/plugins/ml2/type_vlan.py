"""``vlan`` networks: an 802.1Q tag on a physical network.

``[ml2_type_vlan] network_vlan_ranges`` names the physical networks VLAN
networks may use and the tags project networks are allocated from; an admin
may take any valid tag on a known physical network, inside the ranges or not.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins.ml2 import mtu, ranges
from neutrino.plugins.ml2.driver_api import Segment, TypeDriver
from neutrino.plugins.ml2.pool import IdPool
from neutrino.plugins.ml2.segment_ranges import SegmentRanges


def _invalid(msg: str) -> errors.InvalidInput:
    return errors.InvalidInput(error_message=msg)


def _needs_id(physnet: str) -> errors.InvalidInput:
    """A physical network with no range to take a tag from."""
    return _invalid(f"Physical network {physnet} requires segmentation_id to be specified "
                    f"when creating a provider network")


class VlanTypeDriver(TypeDriver):
    network_type = "vlan"

    def __init__(self, conf: Any) -> None:
        super().__init__(conf)
        self.vlan_ranges = ranges.vlan_ranges(conf.ml2_type_vlan.network_vlan_ranges)
        self.physnet_mtus = ranges.physnet_mtus(conf.ml2.physical_network_mtus)
        self.pool = IdPool(t.ml2_vlan_allocations, "vlan_id", "physical_network")
        self.segment_ranges: SegmentRanges | None = None

    def use_segment_ranges(self, ranges: SegmentRanges) -> None:
        self.segment_ranges = ranges

    def sync_allocations(self, conn: Connection) -> None:
        if self.segment_ranges is None:
            self.pool.sync(conn, self.vlan_ranges)
            return
        self.segment_ranges.lock(conn, self.network_type)
        self.segment_ranges.sync_defaults(conn, self.network_type, self.vlan_ranges)
        self.sync_to_segment_ranges(conn)

    def sync_to_segment_ranges(self, conn: Connection) -> None:
        if self.segment_ranges is None:
            return
        self.pool.sync(conn, self.segment_ranges.by_scope(conn, self.network_type, True))

    def is_partial_segment(self, segment: Segment) -> bool:
        return segment.segmentation_id is None

    def validate_provider_segment(self, segment: Segment) -> None:
        physnet, vlan_id = segment.physical_network, segment.segmentation_id
        if physnet:
            if physnet not in self.vlan_ranges:
                raise _invalid(f"physical_network '{physnet}' unknown for VLAN provider network")
            if vlan_id is not None:
                if not ranges.MIN_VLAN_TAG <= vlan_id <= ranges.MAX_VLAN_TAG:
                    raise _invalid(f"segmentation_id out of range ({ranges.MIN_VLAN_TAG} "
                                   f"through {ranges.MAX_VLAN_TAG})")
            elif not self.vlan_ranges[physnet] and self.segment_ranges is None:
                raise _needs_id(physnet)  # (with ranges in the database: checked on reserve)
        elif vlan_id is not None:
            raise _invalid("segmentation_id requires physical_network for VLAN provider network")

    def reserve_provider_segment(self, conn: Connection, segment: Segment,
                                 project_id: str | None = None) -> Segment:
        physnet, vlan_id = segment.physical_network, segment.segmentation_id
        if vlan_id is None:
            if self.segment_ranges is not None:
                if physnet and not self.segment_ranges.has_ranges(conn, self.network_type,
                                                                  physnet):
                    raise _needs_id(physnet)
                key = self.segment_ranges.allocate(conn, self.pool, self.network_type,
                                                   project_id, physnet)
            else:
                key = self.pool.allocate(conn, physnet,
                                         guess_in={physnet: self.vlan_ranges.get(physnet, [])})
            if key is None:
                raise errors.NoNetworkAvailable()
            return Segment(self.network_type, key[0], key[1])
        if not self.pool.reserve(conn, physnet, vlan_id):
            raise errors.VlanIdInUse(vlan_id=vlan_id, physical_network=physnet)
        return segment

    def ahead_tenant_segment(self, conn: Connection) -> None:
        if self.segment_ranges is None:  # (with them, which id depends on the project)
            self.pool.ahead(conn, guess_in=self.vlan_ranges)

    def allocate_tenant_segment(self, conn: Connection,
                                project_id: str | None = None) -> Segment | None:
        if self.segment_ranges is not None:  # any physnet's
            key = self.segment_ranges.allocate(conn, self.pool, self.network_type, project_id)
        else:
            key = self.pool.allocate(conn, guess_in=self.vlan_ranges)  # any physnet's
        return None if key is None else Segment(self.network_type, key[0], key[1])

    def release_segment(self, conn: Connection, segment: Segment) -> None:
        physnet, vlan_id = segment.physical_network, segment.segmentation_id
        if vlan_id is None:
            return
        if self.segment_ranges is not None:
            inside = self.segment_ranges.contains(conn, self.network_type, physnet, vlan_id)
        else:
            inside = ranges.contains(self.vlan_ranges.get(physnet or "", []), vlan_id)
        self.pool.release(conn, physnet, vlan_id, inside)

    def get_mtu(self, physical_network: str | None) -> int:
        return mtu.physical(self.conf, self.physnet_mtus, physical_network)
