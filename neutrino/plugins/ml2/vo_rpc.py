"""Ports, networks, subnets and security groups as upstream's L2 agents
cache them (the resources RPC): read for ``pull``/``bulk_pull`` and pushed
on the ``neutron-vo-<type>-<version>`` fanouts once a change is committed.

Upstream's Open vSwitch agent builds a port's details from its own cache of
versioned objects instead of asking ``get_devices_details_list``: it pulls
what it does not hold, and trusts pushes for every change after that (it
does not listen to the ``q-agent-notifier-*`` fanouts). Each resource is
read as the API shows it, then completed here with what the API does not
show (the binding levels and their segments, each fixed IP's network) into
the values ``rpc/vo_types.py`` declares its fields from. Neutrino keeps no
ids for allocation pools and integer ids for extra DHCP options, where
upstream has UUIDs: those are named from what identifies the row (uuid5),
so the same row always has the same id.

API workers load this module (the pushes): it imports no oslo.messaging;
the endpoint is ``vo_pull_rpc``, loaded by the RPC process only.
"""
from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.db.query import ListQuery
from neutrino.fresh import Fresh
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.ml2 import segments_db
from neutrino.rpc.casts import Casts
from neutrino.rpc.vo_types import OBJECTS, TOP_LEVEL

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin

LOG = logging.getLogger(__name__)
# upstream's event types of a push
CREATED, UPDATED, DELETED = "created", "updated", "deleted"
# the collection each pulled type is read from
PLURALS = {"Port": "ports", "Network": "networks", "Subnet": "subnets",
           "SecurityGroup": "security_groups", "SecurityGroupRule": "security_group_rules",
           "AddressGroup": "address_groups"}
_IDS = uuid.UUID("6f1b6a36-4f0e-4f7b-9b0e-2b9e1c0d5a11")  # the namespace of derived ids
L = t.ml2_port_binding_levels.c
SGB = t.securitygroupportbindings.c
AG = t.agents.c
# seconds a worker trusts its last look at whether any agent consumes pushes
CONSUMERS_MAX_AGE = 5.0


def derived_id(*parts: Any) -> str:
    return str(uuid.uuid5(_IDS, "/".join(str(p) for p in parts)))


class VersionedObjectReader:
    """Resources of one type matching upstream's ``filter_kwargs`` (each key
    a list of values, any of which matches), as the values of their objects."""

    def __init__(self, plugin: CorePlugin) -> None:
        self.plugin = plugin

    def read(self, conn: Connection, rtype: str,
             filters: dict[str, Any]) -> list[dict[str, Any]]:
        filters = {k: _values(v) for k, v in (filters or {}).items()}
        if rtype == "Port" and "security_group_ids" in filters:
            wanted = filters.pop("security_group_ids")
            ids = sorted({pid for part in store.chunks(wanted) for pid in conn.execute(
                sa.select(SGB.port_id).where(SGB.security_group_id.in_(part))).scalars()})
            filters["id"] = [i for i in ids if i in filters["id"]] if "id" in filters else ids
            if not ids:
                return []
        items = self._list(conn, PLURALS[rtype], filters)
        complete = getattr(self, f"_{PLURALS[rtype]}", None)
        return complete(conn, items) if complete else items

    def _list(self, conn: Connection, plural: str,
              filters: dict[str, list[Any]]) -> list[dict[str, Any]]:
        handler = self.plugin.handlers[plural]
        if "id" in filters:
            found: list[dict[str, Any]] = []
            for part in store.chunks(filters["id"]):
                query = ListQuery(filters={**filters, "id": list(part)})
                found.extend(handler.list(conn, Context.admin(), query)[0])
        else:
            found = handler.list(conn, Context.admin(), ListQuery(filters=filters))[0]
        if plural in ("networks", "ports"):
            found = self.plugin.completed(conn, plural, found)
        return found

    def _ports(self, conn: Connection, ports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        ids = [p["id"] for p in ports]
        bindings: dict[str, list[dict[str, Any]]] = {pid: [] for pid in ids}
        levels: dict[str, list[dict[str, Any]]] = {pid: [] for pid in ids}
        active: dict[str, str] = {}
        for part in store.chunks(ids):
            for table, status in ((t.ml2_port_bindings, "ACTIVE"),
                                  (t.ml2_port_inactive_bindings, "INACTIVE")):
                for row in conn.execute(sa.select(table).where(table.c.port_id.in_(part))):
                    if status == "ACTIVE":
                        active[row.port_id] = row.host
                    bindings[row.port_id].append({
                        "port_id": row.port_id, "host": row.host, "profile": row.profile,
                        "vif_type": row.vif_type, "vif_details": row.vif_details,
                        "vnic_type": row.vnic_type, "status": status})
            for row in conn.execute(sa.select(t.ml2_port_binding_levels)
                                    .where(L.port_id.in_(part)).order_by(L.level)):
                levels[row.port_id].append({"port_id": row.port_id, "host": row.host,
                                            "level": row.level, "driver": row.driver,
                                            "segment_id": row.segment_id})
        segments = segments_db.dicts_by_id(
            conn, (lv["segment_id"] for found in levels.values() for lv in found))
        opts = _dhcp_options(conn, ids)
        out = []
        for port in ports:
            pid = port["id"]
            mine = [dict(lv, segment=segments.get(lv["segment_id"] or ""))
                    for lv in levels[pid] if lv["host"] == active.get(pid)]
            out.append({
                **port,
                "fixed_ips": [{"port_id": pid, "network_id": port["network_id"], **ip}
                              for ip in port.get("fixed_ips") or []],
                "allowed_address_pairs": [
                    {"port_id": pid, "mac_address": pair.get("mac_address") or port["mac_address"],
                     "ip_address": pair["ip_address"]}
                    for pair in port.get("allowed_address_pairs") or []],
                "bindings": bindings[pid], "binding_levels": mine,
                "dhcp_options": opts.get(pid, []),
                "security": {"id": pid, "port_security_enabled":
                             port.get("port_security_enabled", True)},
                "hints": {"port_id": pid, "hints": port["hints"]} if port.get("hints") else None,
                "data_plane_status": ({"port_id": pid,
                                       "data_plane_status": port["data_plane_status"]}
                                      if port.get("data_plane_status") else None),
            })
        return out

    def _networks(self, conn: Connection,
                  networks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        segments = segments_db.dicts_of_networks(conn, [n["id"] for n in networks])
        return [{**net, "security": {"id": net["id"], "port_security_enabled":
                                     net.get("port_security_enabled", True)},
                 "segments": segments[net["id"]]} for net in networks]

    def _subnets(self, conn: Connection,
                 subnets: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``external``: the subnet's network is (upstream's synthetic field)."""
        ext = t.externalnetworks.c
        nets = sorted({s["network_id"] for s in subnets})
        external = {nid for part in store.chunks(nets) for nid in conn.execute(
            sa.select(ext.network_id).where(ext.network_id.in_(part))).scalars()}
        return [{**s, "external": s["network_id"] in external,
                 "allocation_pools": [
                     {"id": derived_id(s["id"], p["start"], p["end"]), "subnet_id": s["id"], **p}
                     for p in s.get("allocation_pools") or []],
                 "dns_nameservers": [{"address": a, "order": i, "subnet_id": s["id"]}
                                     for i, a in enumerate(s.get("dns_nameservers") or [])],
                 "host_routes": [{**r, "subnet_id": s["id"]} for r in s.get("host_routes") or []]}
                for s in subnets]

    def _address_groups(self, conn: Connection,
                        groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**g, "addresses": [{"address": a, "address_group_id": g["id"]}
                                    for a in g.get("addresses") or []]} for g in groups]


def _values(value: Any) -> list[Any]:
    return [value] if isinstance(value, str | int) else list(value)


def _dhcp_options(conn: Connection, ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    opt = t.extra_dhcp_opts.c
    out: dict[str, list[dict[str, Any]]] = {}
    for part in store.chunks(ids):
        for row in conn.execute(sa.select(t.extra_dhcp_opts).where(opt.port_id.in_(part))
                                .order_by(opt.id)):
            out.setdefault(row.port_id, []).append({
                "id": derived_id(row.port_id, row.opt_name, row.ip_version),
                "port_id": row.port_id, "opt_name": row.opt_name,
                "opt_value": row.opt_value or "", "ip_version": row.ip_version})
    return out


def primitives(reader: VersionedObjectReader, conn: Connection, rtype: str,
               filters: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects of ``rtype`` matching ``filters`` as primitives."""
    if rtype not in TOP_LEVEL:
        raise LookupError(rtype)
    return [OBJECTS.primitive(rtype, values) for values in reader.read(conn, rtype, filters)]


class VersionedObjectPusher:
    """Once a change is committed, push the objects it changed to every
    upstream agent's cache (as upstream's server does on each change): the
    current object re-read for a create or update, the object as it was for
    a delete; a security group rule pushes its group too, whose revision the
    rule bumped and whose rules the agents replace.

    Only while some agent consumes them: upstream's agents report the object
    versions they cache (``resource_versions``, as upstream's server's
    version manager reads them), neutrino's report none and are told by the
    ``q-agent-notifier-*`` fanouts alone, so a cloud of neutrino's agents
    pays one small read per change instead of the objects' re-read and cast."""

    def __init__(self, plugin: CorePlugin, casts: Casts) -> None:
        self.reader = VersionedObjectReader(plugin)
        self.db, self.casts = plugin.db, casts
        self.consumers = Fresh(self._any_consumer, CONSUMERS_MAX_AGE)

    def _any_consumer(self) -> bool:
        with self.db.reader() as conn:
            return conn.execute(sa.select(AG.id).where(
                AG.resource_versions.is_not(None), AG.resource_versions != "{}",
                AG.resource_versions != "").limit(1)).first() is not None

    def _pushing(self) -> bool:
        """A consumer seen is trusted for ``CONSUMERS_MAX_AGE`` (a stale yes
        costs a push nobody reads); a no is looked at again at every change,
        so an agent that reported in before the change gets its push even
        when it pulled just before."""
        if self.consumers.get():
            return True
        self.consumers.expire()
        return False

    def subscribe(self, events: ev.Events) -> None:
        if not self.casts.enabled:
            return
        for rtype, plural in PLURALS.items():
            # in batches: an agent's device list changes many ports' status at once
            events.subscribe_batch(plural, ev.AFTER_CREATE,
                                   lambda changes, rtype=rtype: self.changed(
                                       rtype, [c[-1]["id"] for c in changes], CREATED))
            events.subscribe_batch(plural, ev.AFTER_UPDATE,
                                   lambda changes, rtype=rtype: self.changed(
                                       rtype, [c[-1]["id"] for c in changes], UPDATED))
            events.subscribe(plural, ev.AFTER_DELETE,
                             lambda ctx, item, rtype=rtype: self.deleted(rtype, item))

    def changed(self, rtype: str, ids: Iterable[str], event_type: str) -> None:
        """The objects ``ids`` re-read at once and pushed in one message."""
        if not self._pushing():
            return
        with self.db.reader() as conn:
            found = self.reader.read(conn, rtype, {"id": list(ids)})
            groups = self._groups_of(conn, rtype, found)
        if found:
            self.push(rtype, found, event_type)
        if groups:
            self.push("SecurityGroup", groups, UPDATED)

    def deleted(self, rtype: str, item: dict[str, Any]) -> None:
        """``item`` as the API showed it before it went: what the agents
        need of it is its id (and a rule's group, to re-filter)."""
        if not self._pushing():
            return
        values = {**item}
        if rtype == "Port":
            values["fixed_ips"] = [{"port_id": item["id"], "network_id": item["network_id"], **ip}
                                   for ip in item.get("fixed_ips") or []]
            values.pop("allowed_address_pairs", None)
        if rtype in ("Network", "SecurityGroup", "AddressGroup", "Subnet"):
            values = {k: v for k, v in values.items() if not isinstance(v, list)}
        self.push(rtype, [values], DELETED)
        if rtype == "SecurityGroupRule":
            with self.db.reader() as conn:
                groups = self._groups_of(conn, rtype, [item])
            if groups:
                self.push("SecurityGroup", groups, UPDATED)

    def _groups_of(self, conn: Connection, rtype: str,
                   rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if rtype != "SecurityGroupRule":
            return []
        ids = sorted({r["security_group_id"] for r in rules})
        return self.reader.read(conn, "SecurityGroup", {"id": ids}) if ids else []

    def push(self, rtype: str, values: list[dict[str, Any]], event_type: str) -> None:
        otype = OBJECTS[rtype]
        self.casts.cast(otype.push_topic, "push", fanout=True, version="1.1",
                        resource_list=[OBJECTS.primitive(rtype, v) for v in values],
                        event_type=event_type)
