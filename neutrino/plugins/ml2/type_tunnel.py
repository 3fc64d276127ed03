"""Tunnel networks: ``vxlan``, ``gre`` and ``geneve``, one id per network.

They differ only in their option group, id space and header size; the pool
logic is the same. An admin may take any id, inside the ranges or not.
"""
from __future__ import annotations

import abc
from typing import Any

from sqlalchemy import Connection, Table

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins.ml2 import mtu, ranges
from neutrino.plugins.ml2.driver_api import Segment, TypeDriver
from neutrino.plugins.ml2.pool import IdPool
from neutrino.plugins.ml2.segment_ranges import SegmentRanges


class _TunnelTypeDriver(TypeDriver):
    table: Table
    group = ""
    option = ""
    bounds: ranges.Range = (ranges.MIN_VNI, ranges.MAX_VNI)
    what = "VNI"

    def __init__(self, conf: Any) -> None:
        super().__init__(conf)
        entries = getattr(getattr(conf, self.group), self.option)
        self.tunnel_ranges = ranges.merge(ranges.tunnel_ranges(
            entries, f"[{self.group}] {self.option}", self.bounds, self.what))
        self.pool = IdPool(self.table, "id")
        self.segment_ranges: SegmentRanges | None = None

    @abc.abstractmethod
    def encap_overhead(self) -> int:
        """Bytes this tunnel's headers take from the underlay MTU."""

    def use_segment_ranges(self, ranges: SegmentRanges) -> None:
        self.segment_ranges = ranges

    def sync_allocations(self, conn: Connection) -> None:
        if self.segment_ranges is None:
            self.pool.sync(conn, {None: self.tunnel_ranges})
            return
        self.segment_ranges.lock(conn, self.network_type)
        self.segment_ranges.sync_defaults(conn, self.network_type, {None: self.tunnel_ranges})
        self.sync_to_segment_ranges(conn)

    def sync_to_segment_ranges(self, conn: Connection) -> None:
        if self.segment_ranges is None:
            return
        self.pool.sync(conn, self.segment_ranges.by_scope(conn, self.network_type, False)
                       or {None: []})

    def is_partial_segment(self, segment: Segment) -> bool:
        return segment.segmentation_id is None

    def validate_provider_segment(self, segment: Segment) -> None:
        if segment.physical_network:
            raise errors.InvalidInput(
                error_message=f"provider:physical_network specified for "
                              f"{segment.network_type} network")

    def reserve_provider_segment(self, conn: Connection, segment: Segment,
                                 project_id: str | None = None) -> Segment:
        tunnel_id = segment.segmentation_id
        if tunnel_id is None:
            found = self.allocate_tenant_segment(conn, project_id)
            if found is None:
                raise errors.NoNetworkAvailable()
            return found
        if not self.pool.reserve(conn, None, tunnel_id):
            raise errors.TunnelIdInUse(tunnel_id=tunnel_id)
        return Segment(self.network_type, None, tunnel_id)

    def ahead_tenant_segment(self, conn: Connection) -> None:
        if self.segment_ranges is None:  # (with them, which id depends on the project)
            self.pool.ahead(conn, guess_in={None: self.tunnel_ranges})

    def allocate_tenant_segment(self, conn: Connection,
                                project_id: str | None = None) -> Segment | None:
        if self.segment_ranges is not None:
            key = self.segment_ranges.allocate(conn, self.pool, self.network_type, project_id)
        else:
            key = self.pool.allocate(conn, guess_in={None: self.tunnel_ranges})
        return None if key is None else Segment(self.network_type, None, key[1])

    def release_segment(self, conn: Connection, segment: Segment) -> None:
        tunnel_id = segment.segmentation_id
        if tunnel_id is None:
            return
        if self.segment_ranges is not None:
            inside = self.segment_ranges.contains(conn, self.network_type, None, tunnel_id)
        else:
            inside = ranges.contains(self.tunnel_ranges, tunnel_id)
        self.pool.release(conn, None, tunnel_id, inside)

    def get_mtu(self, physical_network: str | None = None) -> int:
        return mtu.tunnel(self.conf, self.encap_overhead())


class VxlanTypeDriver(_TunnelTypeDriver):
    network_type = "vxlan"
    table = t.ml2_vxlan_allocations
    group, option = "ml2_type_vxlan", "vni_ranges"

    def encap_overhead(self) -> int:
        return mtu.VXLAN_ENCAP_OVERHEAD


class GreTypeDriver(_TunnelTypeDriver):
    network_type = "gre"
    table = t.ml2_gre_allocations
    group, option = "ml2_type_gre", "tunnel_id_ranges"
    bounds = (ranges.MIN_GRE_ID, ranges.MAX_GRE_ID)
    what = "GRE tunnel id"

    def encap_overhead(self) -> int:
        return mtu.GRE_ENCAP_OVERHEAD


class GeneveTypeDriver(_TunnelTypeDriver):
    network_type = "geneve"
    table = t.ml2_geneve_allocations
    group, option = "ml2_type_geneve", "vni_ranges"

    def encap_overhead(self) -> int:
        return int(self.conf.ml2_type_geneve.max_header_size)
