"""The ``segments`` service plugin: routed networks.

Segments are the ML2 segments networks are made of (``network_segments``),
served as ``/v2.0/segments``: adding one to a network takes its id from the
type driver's pool exactly as a provider network's segment is taken, and
deleting one gives it back. Subnets may be bound to a segment
(``segment_id``), which makes the network routed; the rules for that and
for the addresses of ports on routed networks live with the core resources
(``neutrino.plugins.routed``), since they hold without this plugin too.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from oslo_policy import policy

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import joined, store
from neutrino.plugins.base import ApiExtension, AttributeHandler, ServicePlugin
from neutrino.plugins.joined import Computed
from neutrino.plugins.ml2.driver_api import Segment
from neutrino.resources import segment as defs

T = t.network_segments
ADMIN = "rule:admin_only"


def _dicts(rows: list[Any]) -> list[dict[str, Any]]:
    return [{"id": r.id, "network_id": r.network_id, "name": r.name,
             "description": r.description, "physical_network": r.physical_network,
             "network_type": r.network_type,
             "segmentation_id": None if r.segmentation_id is None else int(r.segmentation_id),
             "created_at": store.iso(r.created_at), "updated_at": store.iso(r.updated_at),
             "revision_number": r.revision_number or 0} for r in rows]


def _not_found(segment_id: str) -> Any:
    return lambda: errors.SegmentNotFound(segment_id=segment_id)


class Segments:
    """The ``segments`` collection, on the core plugin's transactions."""

    def __init__(self, plugin: "SegmentsPlugin") -> None:
        self.plugin = plugin

    @property
    def core(self) -> Any:
        return self.plugin.core

    def create(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        types = self.core.type_manager

        def op(conn: Any) -> list[dict[str, Any]]:
            ids = []
            for item in items:
                net_id = item["network_id"]
                store.get_row(conn, t.networks, net_id,
                              lambda: errors.NetworkNotFound(net_id=net_id),  # noqa: B023 - called here
                              for_update=True)
                wanted = Segment(item["network_type"], item.get("physical_network"),
                                 item.get("segmentation_id"))
                ids.append(types.add_segment(conn, net_id, wanted, item.get("name"),
                                             item.get("description")))
                store.bump(conn, t.networks, net_id)  # its provider view changed
            rows = conn.execute(sa.select(T).where(T.c.id.in_(ids))).all()
            order = {i: n for n, i in enumerate(ids)}
            return _dicts(sorted(rows, key=lambda r: order[r.id]))
        return self.core.write(op)

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.core.db.reader() as conn:
            return _dicts([store.get_row(conn, T, rid, _not_found(rid))])[0]

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(T, query.filters, {})
        with self.core.db.reader() as conn:
            rows, more = store.paged_select(conn, T, clauses, query)
        return _dicts(rows), more

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        values = {k: data[k] for k in ("name", "description") if k in data}

        def op(conn: Any) -> dict[str, Any]:
            store.get_row(conn, T, rid, _not_found(rid), for_update=True)
            store.bump(conn, T, rid, values, revision)
            return _dicts([store.get_row(conn, T, rid, _not_found(rid))])[0]
        return self.core.write(op)

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Any) -> None:
            row = store.get_row(conn, T, rid, _not_found(rid), for_update=True)
            store.check_revision(conn, T, rid, revision)
            subnets = sorted(r.id for r in conn.execute(
                sa.select(t.subnets.c.id).where(t.subnets.c.segment_id == rid)))
            if subnets:
                reason = ("The segment is still associated with subnet(s) "
                          + ", ".join(subnets))
                one = errors.SegmentInUse(segment_id=rid, reason=reason).msg
                # Upstream 29 reports the refusal twice over (its callback
                # failure repeats the cause); clients see exactly this text.
                raise errors.SegmentInUse(message=f"{one}\n{one}")
            self.core.type_manager.remove_segment(conn, _dicts([row])[0] | {"id": rid})
            store.bump(conn, t.networks, row.network_id)
        self.core.write(op)


ATTR = "l2_adjacency"
_ADJACENT = Computed(
    "network__l2_adjacency",
    lambda networks: ~sa.exists().where(t.subnets.c.network_id == networks.c.id,
                                        t.subnets.c.segment_id.is_not(None)),
    fill=lambda item, value: item.__setitem__(ATTR, bool(value)),
    fresh=((t.subnets,), True))  # a new network has no subnets yet


class L2Adjacency(AttributeHandler):
    """``l2_adjacency`` of networks: false once the network's subnets are
    bound to segments (every subnet then lives in its own L2 domain)."""

    def __init__(self, plugin: "SegmentsPlugin") -> None:
        self.plugin = plugin

    def process(self, ctx: Context, plural: str, data: dict[str, Any],
                result: dict[str, Any], creating: bool) -> None:
        if creating:  # an updated network is extended by the controller
            self.extend(ctx, plural, [result])

    def joined(self, plural: str) -> list[Any]:
        return [_ADJACENT]

    def extend(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> None:
        items = joined.missing(items, ATTR)
        ids = [i["id"] for i in items if i.get("subnets")]
        routed: set[str] = set()
        if ids:
            with self.plugin.core.db.reader() as conn:
                for part in store.chunks(ids):
                    routed.update(r.network_id for r in conn.execute(
                        sa.select(t.subnets.c.network_id).distinct().where(
                            t.subnets.c.network_id.in_(part),
                            t.subnets.c.segment_id.is_not(None))))
        for item in items:
            item[ATTR] = item["id"] not in routed


class SegmentsPlugin(ServicePlugin):
    """Segments of networks as an API resource (routed networks)."""

    service_type = "segments"
    supported_extension_aliases = ("segment", "standard-attr-segment", "ip_allocation",
                                   "l2_adjacency", "subnet-segmentid-writable",
                                   "segments-peer-subnet-host-routes")

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.segments = Segments(self)

    def collections(self) -> dict[str, Any]:
        return {"segments": self.segments}

    def extensions(self) -> list[ApiExtension]:
        rules = [policy.RuleDefault(f"{verb}_segment", ADMIN, scope_types=["project"])
                 for verb in ("create", "get", "update", "delete")]
        return [
            ApiExtension(descriptor=defs.SEGMENT_EXTENSION, resources=[defs.SEGMENT],
                         attributes=defs.SUBNET_SEGMENT_ID, policies=rules),
            ApiExtension(descriptor=defs.STANDARD_ATTR_SEGMENT),
            ApiExtension(descriptor=defs.SUBNET_SEGMENTID_WRITABLE),
            # ``ip_allocation`` of ports is stored and shown by the core plugin.
            ApiExtension(descriptor=defs.IP_ALLOCATION),
            ApiExtension(descriptor=defs.L2_ADJACENCY,
                         attributes=defs.NETWORK_L2_ADJACENCY,
                         attribute_handler=L2Adjacency(self)),
        ]
