"""The ``binding`` extension: where and how a port is wired.

The caller says where the port lives (``binding:host_id``), what kind of
NIC it is (``binding:vnic_type``) and anything the drivers need to know
(``binding:profile``); the mechanism drivers answer with ``binding:vif_type``
and ``binding:vif_details``. A port without a host is ``unbound``; a port
with one no driver can serve is ``binding_failed``.

Binding happens inside the port's create/update transaction, after the
other extension drivers: our drivers decide from database rows alone
(agent reports, segments), so binding there keeps the port and its binding
consistent without upstream's separate commit-and-retry loop. The binding
is redone whenever host, vnic_type or profile change, and retried by any
update of a port whose binding failed, as upstream does.
"""
from __future__ import annotations

import json
import logging
from typing import Any, Callable, Collection, Mapping, Sequence

import orjson
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.ipam import request as ipam
from neutrino.plugins import joined, store
from neutrino.plugins.joined import Joined
from neutrino.plugins.ml2 import agents_db, provisioning, segments_db
from neutrino.plugins.ml2.extension_api import ExtensionDriver
from neutrino.plugins.ml2.managers import TypeManager
from neutrino.plugins.ml2.mech_api import (
    VIF_TYPE_BINDING_FAILED,
    VIF_TYPE_UNBOUND,
    VNIC_NORMAL,
    BindingBackend,
    NetworkContext,
    PortContext,
    SegmentDict,
)
from neutrino.plugins.ml2.mech_manager import MechanismManager
from neutrino.resources import validators
from neutrino.resources.attributes import Attribute
from neutrino.resources.port_binding import (
    BINDING,
    HOST,
    PROFILE,
    VIF_DETAILS,
    VIF_TYPE,
    VNIC,
    VNIC_DIRECT_PHYSICAL,
)

LOG = logging.getLogger(__name__)
B = t.ml2_port_bindings
L = t.ml2_port_binding_levels
INACTIVE = t.ml2_port_inactive_bindings

REQUESTED = {HOST: "host", VNIC: "vnic_type", PROFILE: "profile"}
# A binding row's columns with nothing asked and nothing bound: what a port
# without a row reads as (``_fill``).
NOT_BOUND = {"vif_type": VIF_TYPE_UNBOUND, "vif_details": ""}
NOT_ASKED = {"host": "", "vnic_type": VNIC_NORMAL, "profile": "{}"}
BINDING_KEYS = (HOST, VNIC, PROFILE, VIF_TYPE, VIF_DETAILS)

# load_many(conn, port ids) -> the ports by id (those that exist), their API
# dicts with the extension attributes
ManyLoader = Callable[[Connection, Sequence[str]], dict[str, dict[str, Any]]]


def _json(text: str | None) -> dict[str, Any]:
    try:
        value = orjson.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class _Backend(BindingBackend):
    """Binding's access to the running transaction."""

    def __init__(self, conn: Connection, types: TypeManager, down_time: int,
                 shared: bool = False) -> None:
        self.conn, self.types, self.down_time = conn, types, down_time
        self.allocated = False  # a driver took a dynamic segment while binding
        # ``shared``: one backend binds many ports in the transaction, each
        # host's agents read once for all of them
        self._agents: dict[tuple[str, str], list[dict[str, Any]]] | None = (
            {} if shared else None)

    def allocate_dynamic_segment(self, network_id: str, segment: SegmentDict) -> SegmentDict:
        self.allocated = True
        return self.types.allocate_dynamic_segment(self.conn, network_id, segment)

    def release_dynamic_segment(self, segment_id: str) -> None:
        if not _in_use(self.conn, [segment_id]):
            self.types.release_dynamic_segment(self.conn, segment_id)

    def host_agents(self, agent_type: str, host: str) -> list[dict[str, Any]]:
        if self._agents is None:
            return agents_db.host_agents(self.conn, agent_type, host, self.down_time)
        found = self._agents.get((agent_type, host))
        if found is None:
            found = self._agents[(agent_type, host)] = agents_db.host_agents(
                self.conn, agent_type, host, self.down_time)
        return [dict(agent) for agent in found]


def _in_use(conn: Connection, segment_ids: list[str]) -> set[str]:
    if not segment_ids:
        return set()
    return {r.segment_id for r in conn.execute(
        sa.select(L.c.segment_id).where(L.c.segment_id.in_(segment_ids)).distinct())}


_COLUMNS = ("host", "vnic_type", "profile", "vif_type", "vif_details")


def _fill(item: dict[str, Any], values: tuple[Any, ...] | None) -> None:
    """The binding attributes from a ``_COLUMNS`` row; a port without one
    (none was ever asked for) is unbound."""
    if values is None:
        item[HOST], item[VNIC], item[VIF_TYPE] = "", VNIC_NORMAL, VIF_TYPE_UNBOUND
        item[PROFILE], item[VIF_DETAILS] = {}, {}
        return
    host, vnic, profile, vif_type, details = values
    item[HOST], item[VNIC], item[VIF_TYPE] = host, vnic, vif_type
    item[PROFILE] = _json(profile) if profile else {}
    item[VIF_DETAILS] = _json(details) if details else {}


def _changed(data: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """The binding request's columns ``data`` changes, as they are stored."""
    changed = {}
    for key, col in REQUESTED.items():
        if key in data:
            value = (data[key] or {}) if key == PROFILE else data[key]
            if value != original[key]:
                changed[col] = value
    if "profile" in changed:
        changed["profile"] = json.dumps(changed["profile"])
    return changed


def _to_bind(changed: dict[str, Any], original: dict[str, Any]) -> bool:
    """After a change of the request (``changed``) the port is unbound; a
    port whose binding failed is retried by any update."""
    host = changed.get("host", original[HOST])
    vif_type = VIF_TYPE_UNBOUND if changed else original[VIF_TYPE]
    return bool(host) and vif_type in (VIF_TYPE_UNBOUND, VIF_TYPE_BINDING_FAILED)


def _insert_levels(conn: Connection, levels: list[dict[str, Any]]) -> None:
    for i in range(0, len(levels), store.CHUNK):
        conn.execute(sa.insert(L), levels[i:i + store.CHUNK])


# A port's binding is written only by the port's create and updates, which
# advance its revision: the row memo keeps it with the port's own rows.
JOINED = Joined(B, "port_id", _COLUMNS, _fill, follows_revision=True)


class PortBinding(ExtensionDriver):
    extension_alias = "binding"

    def __init__(self, conf: Any, mech: MechanismManager, types: TypeManager,
                 load_many: ManyLoader) -> None:
        super().__init__(conf)
        self.mech, self.types, self.load_many = mech, types, load_many

    def attributes(self) -> dict[str, list[Attribute]]:
        return BINDING

    # -- create / update ------------------------------------------------------------

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        if plural != "ports":
            return
        host = data.get(HOST) or ""
        store.insert(conn, B, {
            "port_id": resource_id, "host": host, "vnic_type": data.get(VNIC) or VNIC_NORMAL,
            "profile": json.dumps(data.get(PROFILE) or {}), **NOT_BOUND}, pipelined=True)
        if host:
            self.bind_many(conn, [resource_id], fresh=True)

    def process_update(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str,
                       original: dict[str, Any]) -> None:
        self.process_update_many(conn, ctx, plural, {resource_id: data},
                                 {resource_id: original})

    def process_update_many(self, conn: Connection, ctx: Context, plural: str,
                            changes: Mapping[str, dict[str, Any]],
                            originals: Mapping[str, dict[str, Any]]) -> None:
        """A request's change of binding unbinds the port (DOWN, wired
        nowhere, when its host changes) and binds it again as asked; the
        statements are shared by the ports, a chunk at a time."""
        if plural != "ports":
            return
        asked = {rid: _changed(data, originals[rid]) for rid, data in changes.items()}
        rebound = [rid for rid, changed in asked.items() if changed]
        self.unbind_many(conn, rebound)
        moved = {rid: asked[rid]["host"] for rid in rebound if "host" in asked[rid]}
        for part in store.chunks(list(moved)):
            conn.execute(sa.update(t.ports).where(t.ports.c.id.in_(part)).values(status="DOWN"))
        # An inactive binding made for the new host is superseded by it.
        self.drop_inactive(conn, moved)
        requests: dict[str, list[str]] = {}
        for rid in rebound:
            requests.setdefault(orjson.dumps(asked[rid], option=orjson.OPT_SORT_KEYS).decode(),
                                []).append(rid)
        for request, ids in requests.items():
            self._write_request(conn, ids, orjson.loads(request))
        for rid, data in changes.items():
            self._detached(conn, data, originals[rid])
        self.bind_many(conn, [rid for rid in changes if _to_bind(asked[rid], originals[rid])],
                       unbound=set(rebound))

    def _detached(self, conn: Connection, data: dict[str, Any],
                  original: dict[str, Any]) -> None:
        if (original[VNIC] == VNIC_DIRECT_PHYSICAL and original["device_id"]
                and data.get("device_id") == "" and data.get("device_owner") == ""):
            # Detached from its instance: the device's MAC is given back.
            self.set_mac(conn, dict(original), ipam.generate_mac(self.conf.base_mac))

    @staticmethod
    def _write_request(conn: Connection, port_ids: list[str], changed: dict[str, Any]) -> None:
        """The same new request, unbound, for each port; a port from before
        the table gets its row."""
        values = {**NOT_BOUND, **changed}
        for part in store.chunks(port_ids):
            if conn.execute(sa.update(B).where(B.c.port_id.in_(part)).values(values)
                            ).rowcount == len(part):
                continue
            have = set(conn.execute(sa.select(B.c.port_id).where(B.c.port_id.in_(part))
                                    ).scalars())
            missing = [{"port_id": pid, **NOT_ASKED, **values} for pid in part
                       if pid not in have]
            if missing:
                store.insert(conn, B, missing)

    def _row(self, conn: Connection, port_id: str) -> Any:
        """The port's binding row; ports from before the table get one."""
        row = conn.execute(sa.select(B).where(B.c.port_id == port_id)).first()
        if row is None:
            conn.execute(sa.insert(B).values(port_id=port_id, **NOT_ASKED, **NOT_BOUND))
            row = conn.execute(sa.select(B).where(B.c.port_id == port_id)).one()
        return row

    # -- binding ----------------------------------------------------------------------

    def bind_many(self, conn: Connection, port_ids: list[str],
                  unbound: Collection[str] = (), fresh: bool = False) -> None:
        """Ask the drivers, level by level, to bind each port, and store what
        they decided. The drivers are asked port by port but every read and
        write is shared: the ports, their networks' segments and the hosts'
        agents read once, the levels, blocks, statuses and binding rows
        written a chunk at a time. ``unbound``: ports whose levels and blocks
        this transaction already dropped; ``fresh``: the ports are being
        created here and have no levels or blocks yet."""
        if not port_ids:
            return
        if not fresh:
            self.unbind_many(conn, [pid for pid in port_ids if pid not in unbound])
        ports = self.load_many(conn, port_ids)
        segments = segments_db.dicts_of_networks(
            conn, sorted({p["network_id"] for p in ports.values()}))
        backend = _Backend(conn, self.types, self.conf.agent_down_time, shared=True)
        levels: list[dict[str, Any]] = []
        statuses: dict[str, list[str]] = {}
        awaiting: list[str] = []
        rows: dict[tuple[str, str], list[str]] = {}
        for pid in port_ids:
            port = ports.get(pid)
            if port is None:
                continue
            static = [{k: v for k, v in seg.items() if k != "segment_index"}
                      for seg in segments.get(port["network_id"], ()) if not seg["is_dynamic"]]
            vif_type, details, status = self._decide(conn, port, backend, static, levels)
            if vif_type != VIF_TYPE_BINDING_FAILED:
                if status:
                    statuses.setdefault(status, []).append(pid)
                else:
                    awaiting.append(pid)
            rows.setdefault((vif_type, json.dumps(details) if details else ""), []).append(pid)
        _insert_levels(conn, levels)
        self.awaiting_agent(conn, awaiting, fresh=fresh)
        for status, ids in statuses.items():
            for part in store.chunks(ids):
                conn.execute(sa.update(t.ports).where(t.ports.c.id.in_(part))
                             .values(status=status))
        for (vif_type, details_text), ids in rows.items():
            for part in store.chunks(ids):
                conn.execute(sa.update(B).where(B.c.port_id.in_(part)).values(
                    vif_type=vif_type, vif_details=details_text))

    @staticmethod
    def awaiting_agent(conn: Connection, port_ids: list[str], fresh: bool = False) -> None:
        """DOWN until the host's L2 agent reports each device up."""
        provisioning.add_many(conn, port_ids, provisioning.L2_AGENT_ENTITY, fresh=fresh)
        for part in store.chunks(port_ids):
            conn.execute(sa.update(t.ports).where(t.ports.c.id.in_(part)).values(status="DOWN"))

    def _decide(self, conn: Connection, current: dict[str, Any],
                backend: _Backend | None = None,
                segments: list[SegmentDict] | None = None,
                pending: list[dict[str, Any]] | None = None,
                ) -> tuple[str, dict[str, Any], str | None]:
        """Ask the drivers, level by level, to bind ``current`` as its binding
        attributes say; store the levels they chose under its host. The
        answer: VIF type and details, and the port status a driver set
        (None: the host's agent reports it). ``segments``: its network's
        static segments, read already; ``pending``: where the levels wait
        to be written with other ports' (``bind_many``; None: written now)."""
        backend = backend or _Backend(conn, self.types, self.conf.agent_down_time)
        backend.allocated = False
        context = self.port_context(conn, current, backend=backend, segments=segments)
        bound = self.mech.bind_port(context)
        status: str | None = None
        if bound and context._result is not None:
            vif_type, details, status = context._result
            details["bound_drivers"] = {str(lv["level"]): lv["driver"]
                                        for lv in context.binding_levels}
            levels = [{"port_id": current["id"], "host": context.host, "level": lv["level"],
                       "driver": lv["driver"], "segment_id": lv["bound_segment"]["id"]}
                      for lv in context.binding_levels]
            if pending is None:
                _insert_levels(conn, levels)
            else:
                pending.extend(levels)
        else:
            LOG.warning("Failed to bind port %s on host %s for vnic_type %s",
                        current["id"], context.host, context.vnic_type)
            vif_type, details = VIF_TYPE_BINDING_FAILED, {}
        if context.vnic_type == VNIC_DIRECT_PHYSICAL:
            self._take_device_mac(conn, context.current, context.profile)
        # Levels tried and abandoned may have taken dynamic segments: give
        # back every dynamic segment of the network that no binding uses.
        if backend.allocated:
            if pending:  # the levels written first: they keep their segments in use
                _insert_levels(conn, pending)
                pending.clear()
            self._release_unused(conn, [s["id"] for s in segments_db.dicts_of_network(
                conn, current["network_id"], dynamic=True)])
        return vif_type, details, status

    def bind_elsewhere(self, conn: Connection, current: dict[str, Any], host: str,
                       vnic: str, profile: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Bind the port ``current`` on ``host`` without touching its active
        binding or status (``binding-extended``'s inactive bindings): the
        drivers' answer, the levels kept under ``host``."""
        asked = {**current, HOST: host, VNIC: vnic, PROFILE: profile,
                 VIF_TYPE: VIF_TYPE_UNBOUND, VIF_DETAILS: {}}
        vif_type, details, _ = self._decide(conn, asked)
        return vif_type, details

    def drop_inactive(self, conn: Connection, hosts: Mapping[str, str]) -> list[str]:
        """Remove each port's inactive binding on the host ``hosts`` names
        for it, with its levels; the ports that had one."""
        gone: list[str] = []
        for part in store.chunks(list(hosts)):
            found = [(r.port_id, r.host) for r in conn.execute(
                sa.select(INACTIVE.c.port_id, INACTIVE.c.host).where(
                    INACTIVE.c.port_id.in_(part))) if hosts[r.port_id] == r.host]
            if found:
                conn.execute(sa.delete(INACTIVE).where(
                    sa.tuple_(INACTIVE.c.port_id, INACTIVE.c.host).in_(found)))
                self._drop_levels(conn, sa.tuple_(L.c.port_id, L.c.host).in_(found))
                gone += [pid for pid, _ in found]
        return gone

    def drop_levels(self, conn: Connection, port_id: str, host: str) -> None:
        """Forget the levels of the port's binding on ``host``, giving back the
        dynamic segments no other binding uses."""
        self._drop_levels(conn, L.c.port_id == port_id, L.c.host == host)

    def _take_device_mac(self, conn: Connection, port: dict[str, Any],
                         profile: dict[str, Any]) -> None:
        """``port-mac-override``: a direct-physical port's MAC is its physical
        function's, which the compute service puts in the profile as
        ``device_mac_address``; without one it gets a new MAC of its own, so
        that the device's stays free for the next port bound to it."""
        mac = profile.get("device_mac_address")
        if isinstance(mac, str):
            try:
                mac = validators.mac_address(mac)
            except validators.Invalid:
                mac = None
        mac = mac or ipam.generate_mac(self.conf.base_mac)
        if mac != port["mac_address"]:
            self.set_mac(conn, port, mac)

    def set_mac(self, conn: Connection, port: dict[str, Any], mac: str) -> None:
        taken = conn.execute(sa.select(t.ports.c.id).where(
            t.ports.c.network_id == port["network_id"], t.ports.c.mac_address == mac,
            t.ports.c.id != port["id"]).limit(1)).first()
        if taken is not None:
            raise errors.MacAddressInUse(net_id=port["network_id"], mac=mac)
        conn.execute(sa.update(t.ports).where(t.ports.c.id == port["id"])
                     .values(mac_address=mac))
        ipam.readdress(conn, port["id"], port["network_id"], mac)
        port["mac_address"] = mac

    def unbind_many(self, conn: Connection, port_ids: list[str]) -> None:
        """Forget the active bindings' levels and blocks, giving back the
        dynamic segments no other binding uses (before a rebind); inactive
        bindings keep theirs."""
        for part in store.chunks(port_ids):
            active = sa.select(B.c.host).where(B.c.port_id == L.c.port_id).scalar_subquery()
            self._drop_levels(conn, L.c.port_id.in_(part), L.c.host == active)
        provisioning.clear_many(conn, port_ids)

    def forget(self, conn: Connection, port_id: str) -> None:
        """A port being deleted: its levels, provisioning blocks and bindings
        go with it (ON DELETE CASCADE); what is left is giving back the
        dynamic segments only it used."""
        self._drop_levels(conn, L.c.port_id == port_id)

    def _drop_levels(self, conn: Connection, *where: Any) -> None:
        """Delete the levels ``where`` selects; the dynamic segments they
        held go back when no other binding uses them."""
        found = list(conn.execute(sa.select(L.c.segment_id).where(*where)))
        if not found:
            return
        conn.execute(sa.delete(L).where(*where))
        used = [r.segment_id for r in found if r.segment_id]
        if used:
            self._release_unused(conn, used)

    def _release_unused(self, conn: Connection, segment_ids: list[str]) -> None:
        found = segments_db.dicts_by_id(conn, segment_ids)
        dynamic = [sid for sid, s in found.items() if s["is_dynamic"]]
        still = _in_use(conn, dynamic)
        for sid in dynamic:
            if sid not in still:
                self.types.release_dynamic_segment(conn, sid)

    # -- contexts for the mechanism drivers ---------------------------------------------

    def port_context(self, conn: Connection, current: dict[str, Any],
                     original: dict[str, Any] | None = None,
                     backend: _Backend | None = None,
                     segments: list[SegmentDict] | None = None) -> PortContext:
        """``segments``: the network's static segments when already read."""
        network_id = current["network_id"]
        if segments is None:
            segments = segments_db.dicts_of_network(conn, network_id)
        network = NetworkContext({"id": network_id}, segments=segments)
        if all(key in current for key in BINDING_KEYS):
            # ``current`` was just loaded with its binding (``extend``): no second read
            binding = {"host": current[HOST], "vnic_type": current[VNIC],
                       "profile": dict(current[PROFILE] or {}), "vif_type": current[VIF_TYPE],
                       "vif_details": dict(current[VIF_DETAILS] or {})}
        else:
            row = self._row(conn, current["id"])
            binding = {"host": row.host, "vnic_type": row.vnic_type,
                       "profile": _json(row.profile), "vif_type": row.vif_type,
                       "vif_details": _json(row.vif_details)}
        # Levels are written only with a successful binding and deleted before
        # the vif_type goes back to unbound: an unbound or failed port has none.
        levels = [] if binding["vif_type"] in (VIF_TYPE_UNBOUND, VIF_TYPE_BINDING_FAILED) else list(
            conn.execute(sa.select(L).where(L.c.port_id == current["id"],
                                            L.c.host == binding["host"]).order_by(L.c.level)))
        known = {s["id"]: s for s in network.network_segments}
        segs = known if all(lv.segment_id in known for lv in levels) else \
            segments_db.dicts_by_id(conn, [lv.segment_id for lv in levels])
        bound = [{"level": lv.level, "driver": lv.driver,
                  "bound_segment": segs.get(lv.segment_id)} for lv in levels]
        return PortContext(current, network, binding, bound, original, backend)

    # -- API dicts and filters ----------------------------------------------------------

    def joined(self, plural: str) -> list[Joined]:
        return [JOINED] if plural == "ports" else []

    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        if plural != "ports":
            return
        items = joined.missing(items, HOST)
        found = store.children(conn, B, "port_id", store.item_ids(items), (),
                               ("port_id", *_COLUMNS))
        for item in items:
            rows = found.get(item["id"])
            _fill(item, rows[0][1:] if rows else None)

    def filter_clauses(self, plural: str, table: Any,
                       filters: dict[str, list[Any]]) -> list[Any]:
        if plural != "ports":
            return []
        out = []
        for key, col in ((HOST, B.c.host), (VNIC, B.c.vnic_type)):
            if key in filters:
                clause = table.c.id.in_(sa.select(B.c.port_id).where(col.in_(filters[key])))
                default = "" if key == HOST else VNIC_NORMAL
                if default in filters[key]:  # ports from before the table have no row
                    clause = sa.or_(clause, table.c.id.not_in(sa.select(B.c.port_id)))
                out.append(clause)
        return out
