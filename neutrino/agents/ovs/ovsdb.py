"""The switch's database side through ovsdbapp: bridges, ports, tags, shaping.

The database is reached through one native IDL connection per OVSDB
endpoint and process (a replica of the tables kept current by the server's
updates, so reads cost no round trip): ``[ovs] ovsdb_connection`` names the
endpoint; unset, it is the local switch's socket, ``unix:$OVS_RUNDIR/db.sock``
(as every OVS tool finds it, ``/var/run/openvswitch`` without
``OVS_RUNDIR``), so an emulated host's private ovsdb-server is reached the
same way as a real hypervisor's. Writes wait, as ``ovs-vsctl`` does, until
ovs-vswitchd has applied them.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Any, Callable

from ovs.db import idl as ovs_idl
from ovsdbapp.backend.ovs_idl import command as idl_command
from ovsdbapp.backend.ovs_idl import connection as idl_connection
from ovsdbapp.backend.ovs_idl import idlutils
from ovsdbapp.schema.open_vswitch import impl_idl

from neutrino.agents.ovs.switch import OvsError, PortTag, SwitchPorts, VifPort

LOG = logging.getLogger(__name__)

# the tables the adapter reads or writes; Interface without its counters,
# which the switch rewrites every few seconds for every port
_TABLES = ("Open_vSwitch", "Bridge", "Port", "QoS", "Queue")
_IFACE_SKIP = {"statistics"}
_QOS_OWNER = "neutrino-qos"
# internal ports added per transaction by ``add_internal_ports``: each
# transaction waits for ovs-vswitchd to have made them, within ``timeout``
ADD_CHUNK = 100


def default_connection() -> str:
    """The local switch's database socket, found as the OVS tools find it."""
    rundir = os.environ.get("OVS_RUNDIR", "/var/run/openvswitch")
    return f"unix:{rundir}/db.sock"


def _one(value: Any) -> Any:
    """An optional OVSDB column (``[]`` when empty, ``x`` or ``[x]`` when set)
    as x or None."""
    if isinstance(value, list):
        return value[0] if value else None
    return value


class _WatchedIdl(idl_connection.OvsdbIdl):  # type: ignore[misc]  # ovsdbapp is untyped
    """The IDL, telling its watchers when a VIF may have come, gone or
    changed: an Interface row added or removed, or its ``ofport`` (the
    switch has attached it) or ``external_ids`` (``iface-id``) changed.
    The switch's own bookkeeping (link state, counters, ...) and the agent's
    writes to ports, tags and QoS do not wake anyone. Called in the IDL's
    connection thread: watchers only set an event."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.watchers: list[Callable[[], None]] = []

    def notify(self, event: str, row: Any, updates: Any = None) -> None:
        if not self.watchers or row._table.name != "Interface":
            return
        if event == ovs_idl.ROW_UPDATE and not (
                hasattr(updates, "ofport") or hasattr(updates, "external_ids")):
            return
        for watcher in list(self.watchers):
            watcher()


class _PortsNamed(idl_command.ReadOnlyCommand):  # type: ignore[misc]  # ovsdbapp is untyped
    """Which of ``names`` are ports of the switch, each found through the
    replica's index on Port names (listing a bridge's ports costs as much
    as the bridge has)."""

    def __init__(self, api: Any, names: list[str]) -> None:
        super().__init__(api)
        self.names = names

    def run_idl(self, txn: Any) -> None:
        self.result = {name for name in self.names
                       if next(idlutils.rows_by_value(self.api.idl, "Port", "name", name),
                               None) is not None}


_apis: dict[tuple[str, int], impl_idl.OvsdbIdl] = {}
_apis_lock = threading.Lock()


def _api(endpoint: str, timeout: int) -> impl_idl.OvsdbIdl:
    """The process's IDL for ``endpoint``, connected on first use. A failed
    connect is not remembered: the next call tries again (the switch may be
    starting)."""
    with _apis_lock:
        api = _apis.get((endpoint, timeout))
        if api is None:
            try:
                helper = idlutils.get_schema_helper(endpoint, "Open_vSwitch")
                for table in _TABLES:
                    helper.register_table(table)
                columns = helper.schema_json["tables"]["Interface"]["columns"]
                helper.register_columns("Interface", [c for c in columns
                                                      if c not in _IFACE_SKIP])
                idl = _WatchedIdl(endpoint, helper)
                # ovsdbapp keeps a backend's connection on its class, so the
                # first endpoint a process opened would serve every later
                # one: each endpoint gets a class of its own.
                backend = type("OvsdbIdl", (impl_idl.OvsdbIdl,), {"_ovsdb_connection": None})
                api = backend(idl_connection.Connection(idl, timeout))
            except Exception as exc:  # ovs and ovsdbapp raise several kinds
                raise OvsError(f"OVSDB {endpoint}: {exc}") from exc
            _apis[(endpoint, timeout)] = api
        return api


class OvsdbPorts(SwitchPorts):
    """The database half of the switch, through the process's IDL for ``db``."""

    def __init__(self, db: str | None = None, timeout: int = 10) -> None:
        self.db = db or default_connection()
        self.timeout = timeout
        self._ofports: dict[str, int] = {}  # see port_numbers
        self._ofports_seqno: int | None = None

    # -- plumbing --------------------------------------------------------------------

    @property
    def api(self) -> impl_idl.OvsdbIdl:
        return _api(self.db, self.timeout)

    def watch_vifs(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call ``watcher`` (from another thread) whenever a VIF may have
        come, gone or changed (``_WatchedIdl``); returns what stops it."""
        watchers = self.api.idl.watchers
        watchers.append(watcher)

        def unwatch() -> None:
            if watcher in watchers:
                watchers.remove(watcher)
        return unwatch

    def _commit(self, commands: list[Any]) -> None:
        """Run ``commands`` as one OVSDB transaction."""
        if not commands:
            return
        api = self.api
        try:
            with api.transaction(check_error=True, log_errors=False) as txn:
                for command in commands:
                    txn.add(command)
        except Exception as exc:
            raise OvsError(f"OVSDB {self.db}: {exc}") from exc

    def _read(self, command: Any) -> Any:
        try:
            return command.execute(check_error=True, log_errors=False)
        except Exception as exc:
            raise OvsError(f"OVSDB {self.db}: {exc}") from exc

    def _rows(self, table: str, columns: list[str]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self._read(self.api.db_list(table, columns=columns))
        return rows

    # -- bridges and ports -----------------------------------------------------------

    def ensure_bridge(self, name: str, datapath_type: str = "system",
                      fail_mode: str = "secure") -> None:
        self._commit([self.api.add_br(name, may_exist=True, datapath_type=datapath_type),
                      self.api.db_set("Bridge", name, ("fail_mode", fail_mode))])

    def bridge_exists(self, name: str) -> bool:
        return bool(self._read(self.api.br_exists(name)))

    def ports(self, bridge: str) -> list[str]:
        return sorted(self._read(self.api.list_ports(bridge)))

    def ports_named(self, names: list[str]) -> set[str]:
        """Those of ``names`` that are ports of the switch (on whichever
        bridge: a port's name is unique in the switch's database); one read,
        as long as ``names`` whatever the number of ports."""
        if not names:
            return set()
        found: set[str] = self._read(_PortsNamed(self.api, list(names)))
        return found

    def _ensure_port(self, bridge: str, port: str, **iface: Any) -> None:
        """The port (one interface of the same name), its interface's columns
        set also when it existed (maps are merged into what is there)."""
        self._commit([self.api.add_port(bridge, port, may_exist=True),
                      self.api.db_set("Interface", port, *iface.items())])

    def ensure_patch(self, bridge: str, port: str, peer: str) -> None:
        self._ensure_port(bridge, port, type="patch", options={"peer": peer})

    def ensure_tunnel(self, bridge: str, port: str, tunnel_type: str, local_ip: str,
                      remote_ip: str) -> None:
        self._ensure_port(bridge, port, type=tunnel_type,
                          options={"remote_ip": remote_ip, "local_ip": local_ip,
                                   "in_key": "flow", "out_key": "flow"})

    def tunnel_ports(self, bridge: str) -> dict[str, str]:
        """Tunnel port name -> remote IP, for the tunnel ports of ``bridge``."""
        names = set(self.ports(bridge))
        return {row["name"]: row["options"].get("remote_ip", "")
                for row in self._rows("Interface", ["name", "type", "options"])
                if row["name"] in names and row["type"] in ("vxlan", "gre", "geneve")}

    def delete_port(self, bridge: str, port: str) -> None:
        self._commit([self.api.del_port(port, bridge, if_exists=True)])

    def add_internal_port(self, bridge: str, port: str, iface_id: str, mac: str) -> None:
        self.add_internal_ports(bridge, [(port, iface_id, mac)])

    def add_internal_ports(self, bridge: str, ports: list[tuple[str, str, str]]) -> None:
        """``add_internal_port`` for each (port, iface_id, mac), ``ADD_CHUNK``
        to a transaction: ovs-vswitchd reconfigures its bridges once per
        transaction, at a cost that grows with their ports, so a port at a
        time is what made attaching many slow."""
        for start in range(0, len(ports), ADD_CHUNK):
            commands = []
            for port, iface_id, mac in ports[start:start + ADD_CHUNK]:
                external_ids = {"iface-id": iface_id, "iface-status": "active",
                                "attached-mac": mac}
                commands += [self.api.add_port(bridge, port, may_exist=True),
                             self.api.db_set("Interface", port, ("type", "internal"),
                                             ("external_ids", external_ids))]
            self._commit(commands)

    def set_port_tags(self, tags: list[PortTag]) -> None:
        """Tag ports, all in one transaction: the switch is waited for once,
        not per port (a wait per port is what makes a large resync slow).
        An empty ``other_config`` value (a flat network has no segmentation
        id) removes that key instead of storing ``""``. ``vlan_mode`` and
        ``trunks`` are cleared, as upstream's agent clears them: upstream's
        interface driver plugs DHCP and router ports as a trunk of the dead
        VLAN only, which would keep such a port isolated under its tag."""
        commands = []
        for port, tag, other_config in tags:
            keep = {k: v for k, v in other_config.items() if v != ""}
            drop = [k for k, v in other_config.items() if v == ""]
            commands.append(self.api.db_set("Port", port, ("tag", tag),
                                            ("other_config", keep)))
            commands.append(self.api.db_clear("Port", port, "vlan_mode"))
            commands.append(self.api.db_clear("Port", port, "trunks"))
            if drop:
                commands.append(self.api.db_remove("Port", port, "other_config", *drop))
        self._commit(commands)

    def vif_ports(self, bridge: str) -> list[VifPort]:
        """Ports of ``bridge`` whose interface names a Neutron port (iface-id)."""
        names = set(self.ports(bridge))
        ifaces = {r["name"]: r for r in
                  self._rows("Interface", ["name", "external_ids", "ofport"])}
        out = []
        for port in self._rows("Port", ["name", "tag", "other_config"]):
            iface = ifaces.get(port["name"])
            if port["name"] not in names or iface is None:
                continue
            ext = iface["external_ids"]
            ofport = _one(iface["ofport"])
            if "iface-id" not in ext or not isinstance(ofport, int) or ofport <= 0:
                continue
            out.append(VifPort(port["name"], ext["iface-id"], ext.get("attached-mac"),
                               ofport, _one(port["tag"]), dict(port["other_config"])))
        return sorted(out, key=lambda p: p.name)

    def port_numbers(self) -> dict[str, int]:
        """Port name -> OpenFlow port number, of every port seen so far: a flow
        naming a port that is gone can only be deleted by the number it had.
        Read again only when the replica changed (reading a large Interface
        table is slow in Python, and a pass adds flows several times)."""
        seqno = self.api.idl.change_seqno
        if seqno != self._ofports_seqno:
            for row in self._rows("Interface", ["name", "ofport"]):
                ofport = _one(row["ofport"])
                if isinstance(ofport, int) and ofport > 0:
                    self._ofports[row["name"]] = ofport
            self._ofports_seqno = seqno
        return self._ofports

    # -- QoS: egress shaping ---------------------------------------------------------

    def set_port_shaping(self, port: str, kbps: int | None, burst_kb: int = 0) -> None:
        """Limit what the switch sends to ``port`` (``linux-htb``, one queue), or
        with ``kbps`` None stop limiting. QoS and Queue are root tables, kept
        while unreferenced: the rows this replaces are destroyed with it."""
        api = self.api
        ports = self._read(api.db_list("Port", [port], columns=["qos"], if_exists=True))
        if not ports:
            return
        commands = [api.db_clear("Port", port, "qos")]
        old = _one(ports[0]["qos"])
        old_queues = self._own_qos().get(old)
        if old_queues is not None:
            commands.append(api.db_destroy("QoS", old))
            commands += [api.db_destroy("Queue", q) for q in old_queues.values()]
        if kbps is not None:
            rate, burst = str(kbps * 1000), str(burst_kb * 1000)
            queue = api.db_create("Queue", other_config={"max-rate": rate, "burst": burst})
            qos = api.db_create("QoS", type="linux-htb", other_config={"max-rate": rate},
                                external_ids={"owner": _QOS_OWNER}, queues={0: queue})
            commands += [queue, qos, api.db_set("Port", port, ("qos", qos))]
        self._commit(commands)

    def _own_qos(self) -> dict[Any, dict[Any, Any]]:
        """QoS uuid -> its queues (number -> Queue uuid), of the QoS rows
        ``set_port_shaping`` made."""
        return {r["_uuid"]: {k: getattr(v, "uuid", v) for k, v in r["queues"].items()}
                for r in self._rows("QoS", ["_uuid", "external_ids", "queues"])
                if r["external_ids"].get("owner") == _QOS_OWNER}

    def port_shapings(self) -> dict[str, tuple[int, int]]:
        """Port name -> (kbps, burst kb) of the shaping ``set_port_shaping`` made."""
        queues = {r["_uuid"]: r["other_config"]
                  for r in self._rows("Queue", ["_uuid", "other_config"])}
        own = self._own_qos()
        out = {}
        for port in self._rows("Port", ["name", "qos"]):
            qos = own.get(_one(port["qos"]))
            if qos is not None:
                queue = queues.get(qos.get(0), {})
                out[port["name"]] = (int(queue.get("max-rate", 0)) // 1000,
                                     int(queue.get("burst", 0)) // 1000)
        return out
