"""TypeManager: the configured type drivers, and segments for networks.

Start-up refuses, with a line naming the option, an unknown driver name, a
bad range, and a tenant or external network type that no loaded driver
handles; two drivers for one type keep the first and log the second.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

from sqlalchemy import Connection

from neutrino import errors
from neutrino.db.engine import Database, retrying
from neutrino.plugins import loader, store
from neutrino.plugins.ml2 import provider, segments_db
from neutrino.plugins.ml2.driver_api import PROVIDER_ATTRS, Segment, TypeDriver
from neutrino.plugins.ml2.exceptions import Ml2ConfigError
from neutrino.plugins.ml2.segment_ranges import RANGE_TYPES, SegmentRanges

LOG = logging.getLogger(__name__)
NAMESPACE = "neutrino.ml2.type_drivers"
PROVIDER_UPDATE_UNSUPPORTED = ("Plugin does not support updating the following provider "
                               "network attributes: provider:physical_network, "
                               "provider:network_type")


class TypeManager:
    """Network type -> driver, and the segment life cycle of networks."""

    def __init__(self, conf: Any) -> None:
        self.conf = conf
        self.drivers: dict[str, TypeDriver] = {}
        LOG.info("Configured type driver names: %s", conf.ml2.type_drivers)
        for name in conf.ml2.type_drivers:
            if name.strip():
                self._register(name.strip(), self._load(name.strip()))
        LOG.info("Registered types: %s", sorted(self.drivers))
        self.tenant_network_types = self._checked_tenant_types(conf.ml2.tenant_network_types)
        self.external_network_type = self._checked_external_type(
            conf.ml2.external_network_type)
        self.segment_ranges: SegmentRanges | None = None

    # -- start-up -------------------------------------------------------------

    def _load(self, name: str) -> TypeDriver:
        cls = loader.load_driver_class(NAMESPACE, name, TypeDriver, "[ml2] type_drivers",
                                       Ml2ConfigError)
        return cls(self.conf)

    def _register(self, name: str, driver: TypeDriver) -> None:
        ntype = driver.get_type()
        if ntype in self.drivers:
            LOG.error("Type driver '%s' ignored because type driver '%s' is already "
                      "registered for type '%s'", name,
                      type(self.drivers[ntype]).__name__, ntype)
            return
        self.drivers[ntype] = driver

    def _checked_tenant_types(self, types: list[str]) -> list[str]:
        out = []
        for ntype in (t.strip() for t in types):
            if not ntype:
                continue
            if ntype not in self.drivers:
                raise Ml2ConfigError(f"[ml2] tenant_network_types: no type driver for "
                                     f"tenant network_type '{ntype}' (loaded: "
                                     f"{', '.join(sorted(self.drivers)) or 'none'})")
            out.append(ntype)
        return out

    def _checked_external_type(self, ntype: str | None) -> str | None:
        if ntype and ntype not in self.drivers:
            raise Ml2ConfigError(f"[ml2] external_network_type: no type driver for "
                                 f"external network_type '{ntype}' (loaded: "
                                 f"{', '.join(sorted(self.drivers)) or 'none'})")
        return ntype or None

    def use_segment_ranges(self, ranges: SegmentRanges) -> None:
        """Pools of the types ranges exist for follow the database's ranges
        (the ``network_segment_range`` service plugin), from the start-up's
        ``sync_allocations`` on."""
        self.segment_ranges = ranges
        for ntype, driver in self.drivers.items():
            if ntype in RANGE_TYPES:
                driver.use_segment_ranges(ranges)

    def supports_segment_ranges(self, network_type: str | None) -> bool:
        """Whether ranges of this type can be managed: a loaded type that has them."""
        return network_type in RANGE_TYPES and network_type in self.drivers

    def lock_segment_ranges(self, conn: Connection, network_type: str) -> None:
        """Before changing ranges of the type (``SegmentRanges.lock``)."""
        assert self.segment_ranges is not None
        self.segment_ranges.lock(conn, network_type)

    def segment_ranges_changed(self, conn: Connection, network_type: str) -> None:
        """A range of the type was added, changed or removed: its pool follows."""
        self.drivers[network_type].sync_to_segment_ranges(conn)

    def sync_allocations(self, db: Database) -> None:
        """Align every driver's pool with its ranges, each in one transaction."""
        for driver in self.drivers.values():
            @retrying
            def sync(driver: TypeDriver = driver) -> None:
                with db.writer() as conn:
                    driver.sync_allocations(conn)
            sync()

    # -- segments of a network ------------------------------------------------

    def _driver(self, segment: Segment) -> TypeDriver:
        driver = self.drivers.get(segment.network_type)
        if driver is None:
            raise errors.InvalidInput(
                error_message=f"network_type value '{segment.network_type}' not supported")
        return driver

    def _validate(self, segment: Segment) -> None:
        self._driver(segment).validate_provider_segment(segment)

    def _is_partial(self, segment: Segment) -> bool:
        return self._driver(segment).is_partial_segment(segment)

    def ahead(self, conn: Connection, data: dict[str, Any]) -> None:
        """For a network ``allocate`` will give a project segment (no
        provider attributes, not an external network of its own type): the
        first project type's first try, sent ahead (``db/pipeline.py``)."""
        if provider.requested(data) or not self.tenant_network_types or (
                self.external_network_type and data.get("router:external") is True):
            return
        self.drivers[self.tenant_network_types[0]].ahead_tenant_segment(conn)

    def allocate(self, conn: Connection, data: dict[str, Any]) -> list[Segment]:
        """Segments for a new network: the provider ones asked for, an external
        network's, or the first project type's that has a free one."""
        wanted = provider.process(data, self._validate, self._is_partial)
        project_id = data.get("project_id")
        if wanted:
            return [self._driver(s).reserve_provider_segment(conn, s, project_id)
                    for s in wanted]
        if self.external_network_type and data.get("router:external") is True:
            found = self.drivers[self.external_network_type].allocate_tenant_segment(
                conn, project_id)
            if found is None:
                raise errors.NoNetworkAvailable()
            return [found]
        for ntype in self.tenant_network_types:
            found = self.drivers[ntype].allocate_tenant_segment(conn, project_id)
            if found is not None:
                return [found]
        raise errors.NoNetworkAvailable()

    def create_network_segments(self, conn: Connection, network_id: str,
                                segments: list[Segment]) -> None:
        segments_db.add(conn, network_id, segments)

    def release_network_segments(self, conn: Connection, network_id: str) -> None:
        """Give the network's ids back to their pools and forget its segments
        (dynamic ones too: they die with the network)."""
        for found in segments_db.dicts_of_network(conn, network_id, dynamic=None):
            segment = Segment(found["network_type"], found["physical_network"],
                              found["segmentation_id"])
            driver = self.drivers.get(segment.network_type)
            if driver is None:
                LOG.warning("no type driver for network_type %s of network %s; "
                            "segment not released", segment.network_type, network_id)
                continue
            driver.release_segment(conn, segment)
        segments_db.remove(conn, network_id)

    def add_segment(self, conn: Connection, network_id: str, wanted: Segment,
                    name: str | None = None, description: str | None = None) -> str:
        """A segment added to an existing network (the segments API): checked
        and taken from its type's pool exactly as a provider segment is."""
        driver = self._driver(wanted)
        driver.validate_provider_segment(wanted)
        taken = driver.reserve_provider_segment(conn, wanted)
        return segments_db.add_one(conn, network_id, taken, name, description)

    def remove_segment(self, conn: Connection, segment: dict[str, Any]) -> None:
        """Give one segment's id back to its pool and forget the segment."""
        driver = self.drivers.get(segment["network_type"])
        if driver is not None:
            driver.release_segment(conn, Segment(segment["network_type"],
                                                 segment["physical_network"],
                                                 segment["segmentation_id"]))
        segments_db.remove_one(conn, segment["id"])

    def allocate_dynamic_segment(self, conn: Connection, network_id: str,
                                 wanted: dict[str, Any]) -> dict[str, Any]:
        """A dynamic segment of the network for hierarchical binding: the one
        already matching ``wanted``, or a new one taken from the type's pool
        (partial) or exactly as given (full)."""
        segment = Segment(wanted["network_type"], wanted.get("physical_network"),
                          wanted.get("segmentation_id"))
        found = segments_db.find_dynamic(conn, network_id, segment)
        if found is not None:
            return found
        driver = self._driver(segment)
        driver.validate_provider_segment(segment)
        taken = driver.reserve_provider_segment(conn, segment)
        return segments_db.add_dynamic(conn, network_id, taken)

    def release_dynamic_segment(self, conn: Connection, segment_id: str) -> None:
        found = segments_db.dicts_by_id(conn, [segment_id]).get(segment_id)
        if found is None or not found["is_dynamic"]:
            return
        driver = self.drivers.get(found["network_type"])
        if driver is not None:
            driver.release_segment(conn, Segment(found["network_type"],
                                                 found["physical_network"],
                                                 found["segmentation_id"]))
        segments_db.remove_one(conn, segment_id)

    def update_provider(self, conn: Connection, network_id: str,
                        data: dict[str, Any]) -> None:
        """Only the segmentation id of a single-segment network can change."""
        asked = {k: data[k] for k in PROVIDER_ATTRS.values() if provider.given(data.get(k))}
        if not asked:
            return
        current = segments_db.of_networks(conn, [network_id])[network_id]
        if len(current) != 1:
            raise errors.InvalidInput(
                error_message="Provider network attributes can be updated only in "
                              "provider networks with a single segment.")
        old = current[0]
        for key in ("provider:network_type", "provider:physical_network"):
            if key in asked and asked[key] != old.as_provider()[key]:
                raise errors.InvalidInput(error_message=PROVIDER_UPDATE_UNSUPPORTED)
        new_id = asked.get("provider:segmentation_id", old.segmentation_id)
        if new_id == old.segmentation_id:
            return
        new = Segment(old.network_type, old.physical_network, new_id)
        driver = self._driver(new)
        driver.validate_provider_segment(new)
        driver.reserve_provider_segment(conn, new)
        driver.release_segment(conn, old)
        segments_db.replace_id(conn, network_id, old, new_id)

    # -- MTU ------------------------------------------------------------------

    def max_mtu(self, segments: list[Segment]) -> int:
        """The smallest MTU the segments allow (types without one ignored)."""
        mtus = []
        for segment in segments:
            driver = self.drivers.get(segment.network_type)
            value = driver.get_mtu(segment.physical_network) if driver else 0
            if value > 0:
                mtus.append(value)
        return min(mtus) if mtus else int(self.conf.global_physnet_mtu)

    def network_mtu(self, segments: list[Segment], requested: int | None) -> int:
        """The MTU to store: the requested one if the segments carry it."""
        largest = self.max_mtu(segments)
        if requested and requested > largest:
            raise errors.InvalidInput(
                error_message=f"Requested MTU is too big, maximum is {largest}")
        return requested or largest

    def check_mtu(self, conn: Connection, network_id: str, requested: int | None) -> int:
        """The MTU to store for an existing network (``network_mtu``'s rule)."""
        segments = segments_db.of_networks(conn, [network_id])[network_id]
        return self.network_mtu(segments, requested)

    # -- API dicts ------------------------------------------------------------

    # Read with a single network's row (plugins/joined.py); ``rows`` below.
    reads = (segments_db.STATIC,)

    def extend_network_dicts(self, conn: Connection, networks: list[dict[str, Any]],
                             rows: Sequence[Any] = ()) -> None:
        found = segments_db.of_networks(conn, store.item_ids(networks), rows)
        for network in networks:
            provider.extend_network_dict(network, found.get(network["id"], []))

    def filter_clauses(self, network_id_col: Any) -> dict[str, Any]:
        """List filters on ``provider:*``, for the networks' list query."""
        return {api: (lambda vals, col=key: segments_db.filter_clause(network_id_col, col,
                                                                       vals))
                for key, api in PROVIDER_ATTRS.items()}
