"""The adapter to Open vSwitch: ``ovs-vsctl`` for the database, ``ovs-ofctl`` for flows.

The agent's logic never builds a command line; it asks this adapter for
bridges, ports and flows. Which switch is meant comes from the environment
(``OVS_RUNDIR``, as every OVS tool reads it) or from ``[ovs]
ovsdb_connection``; so an emulated host's private ovsdb-server is reached
the same way as a real hypervisor's. Every call is one process run; the
agent batches (one ``add-flows`` for many flows) where it matters.
"""
from __future__ import annotations

import json
import logging
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any, Iterable

LOG = logging.getLogger(__name__)


class OvsError(RuntimeError):
    """An OVS tool failed; the message carries its stderr."""


@dataclass(frozen=True)
class VifPort:
    """A br-int port that a VIF (instance, DHCP, router device) owns."""
    name: str
    iface_id: str
    mac: str | None
    ofport: int
    tag: int | None
    other_config: dict[str, str] = field(default_factory=dict)


def _ovs_map(value: Any) -> dict[str, str]:
    """Decode an OVSDB map as ``ovs-vsctl --format=json`` prints it."""
    if isinstance(value, list) and value and value[0] == "map":
        return {k: v for k, v in value[1]}
    return {}


def _ovs_map_uuid(value: Any) -> list[tuple[Any, Any]]:
    """An OVSDB map whose values are references, as (key, ["uuid", id]) pairs."""
    if isinstance(value, list) and value and value[0] == "map":
        return [(k, v) for k, v in value[1]]
    return []


def _ovs_scalar(value: Any) -> Any:
    """OVSDB optional scalars are ``["set", []]`` when empty."""
    if isinstance(value, list) and value and value[0] == "set":
        return value[1][0] if value[1] else None
    if isinstance(value, list) and value and value[0] == "uuid":
        return value[1]
    return value


class OvsCtl:
    def __init__(self, db: str | None = None, timeout: int = 10) -> None:
        self.db = db
        self.timeout = timeout
        # port name -> OpenFlow port number, as last seen: a flow naming a port
        # that is gone can only be deleted by its number
        self._ofports: dict[str, int] = {}

    # -- plumbing --------------------------------------------------------------------

    def _run(self, argv: list[str], stdin: str | None = None) -> str:
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                              timeout=self.timeout + 20)
        if proc.returncode != 0:
            raise OvsError(f"{' '.join(argv[:4])}...: {proc.stderr.strip()}")
        return proc.stdout

    def vsctl(self, *args: str) -> str:
        base = ["ovs-vsctl", f"--timeout={self.timeout}"]
        if self.db:
            base.append(f"--db={self.db}")
        return self._run([*base, *args])

    def ofctl(self, *args: str, stdin: str | None = None) -> str:
        return self._run(["ovs-ofctl", *args], stdin)

    # -- bridges and ports -----------------------------------------------------------

    def ensure_bridge(self, name: str, datapath_type: str = "system",
                      fail_mode: str = "secure") -> None:
        self.vsctl("--may-exist", "add-br", name, "--", "set", "bridge", name,
                   f"datapath_type={datapath_type}", f"fail_mode={fail_mode}")

    def bridge_exists(self, name: str) -> bool:
        return name in self.vsctl("list-br").split()

    def ports(self, bridge: str) -> list[str]:
        return self.vsctl("list-ports", bridge).split()

    def ensure_patch(self, bridge: str, port: str, peer: str) -> None:
        self.vsctl("--may-exist", "add-port", bridge, port, "--", "set", "interface", port,
                   "type=patch", f"options:peer={peer}")

    def ensure_tunnel(self, bridge: str, port: str, tunnel_type: str, local_ip: str,
                      remote_ip: str) -> None:
        self.vsctl("--may-exist", "add-port", bridge, port, "--", "set", "interface", port,
                   f"type={tunnel_type}", f"options:remote_ip={remote_ip}",
                   f"options:local_ip={local_ip}", "options:in_key=flow",
                   "options:out_key=flow")

    def tunnel_ports(self, bridge: str) -> dict[str, str]:
        """Tunnel port name -> remote IP, for the tunnel ports of ``bridge``."""
        out = {}
        rows = self._rows("Interface", "name,type,options")
        names = set(self.ports(bridge))
        for row in rows:
            if row["name"] in names and row["type"] in ("vxlan", "gre", "geneve"):
                out[row["name"]] = _ovs_map(row["options"]).get("remote_ip", "")
        return out

    def delete_port(self, bridge: str, port: str) -> None:
        self.vsctl("--if-exists", "del-port", bridge, port)

    def add_internal_port(self, bridge: str, port: str, iface_id: str, mac: str) -> None:
        self.vsctl("--may-exist", "add-port", bridge, port, "--", "set", "interface", port,
                   "type=internal", f"external_ids:iface-id={iface_id}",
                   "external_ids:iface-status=active", f"external_ids:attached-mac={mac}")

    def set_port_tag(self, port: str, tag: int, other_config: dict[str, str]) -> None:
        self.set_port_tags([(port, tag, other_config)])

    def set_port_tags(self, tags: list[tuple[str, int, dict[str, str]]]) -> None:
        """Tag ports, in one transaction per 200 (ovs-vsctl waits for the switch
        to apply each transaction: one per port makes a 1,000-port resync take
        minutes). An empty ``other_config`` value (a flat network has no
        segmentation id) removes that key, as ovs-vsctl refuses ``key=``."""
        for start in range(0, len(tags), 200):
            args: list[str] = []
            for port, tag, other_config in tags[start:start + 200]:
                args += ["--", "set", "port", port, f"tag={tag}"]
                args += [f"other_config:{k}={v}" for k, v in other_config.items() if v != ""]
                for key in (k for k, v in other_config.items() if v == ""):
                    args += ["--", "remove", "port", port, "other_config", key]
            if args:
                self.vsctl(*args[1:])

    def _rows(self, table: str, columns: str) -> list[dict[str, Any]]:
        raw = json.loads(self.vsctl("--format=json", f"--columns={columns}", "list", table))
        heads = raw["headings"]
        return [dict(zip(heads, row)) for row in raw["data"]]

    def vif_ports(self, bridge: str) -> list[VifPort]:
        """Ports of ``bridge`` whose interface names a Neutron port (iface-id)."""
        names = set(self.ports(bridge))
        ifaces = {r["name"]: r for r in self._rows("Interface", "name,external_ids,ofport")}
        out = []
        for port in self._rows("Port", "name,tag,other_config"):
            iface = ifaces.get(port["name"])
            if port["name"] not in names or iface is None:
                continue
            ext = _ovs_map(iface["external_ids"])
            ofport = _ovs_scalar(iface["ofport"])
            if "iface-id" not in ext or not isinstance(ofport, int) or ofport <= 0:
                continue
            out.append(VifPort(port["name"], ext["iface-id"], ext.get("attached-mac"),
                               ofport, _ovs_scalar(port["tag"]),
                               _ovs_map(port["other_config"])))
        return out

    # -- flows -------------------------------------------------------------------------

    def add_flows(self, bridge: str, specs: Iterable[str]) -> None:
        specs = list(specs)
        if not specs:
            return
        self._remember_ofports()
        # meter instructions exist from OpenFlow 1.3 on; the rest keeps the default
        metered = [s for s in specs if "meter:" in s]
        plain = [s for s in specs if "meter:" not in s]
        if plain:
            self.ofctl("add-flows", bridge, "-", stdin="\n".join(plain) + "\n")
        if metered:
            self.ofctl("-O", "OpenFlow13", "add-flows", bridge, "-",
                       stdin="\n".join(metered) + "\n")

    def _remember_ofports(self) -> None:
        for row in self._rows("Interface", "name,ofport"):
            ofport = _ovs_scalar(row["ofport"])
            if isinstance(ofport, int) and ofport > 0:
                self._ofports[row["name"]] = ofport

    def _by_number(self, key: str) -> str:
        """``in_port=<name>`` as the number the port had when the flow was added."""
        return re.sub(r"in_port=([^,]+)",
                      lambda m: f"in_port={self._ofports.get(m.group(1), m.group(1))}", key)

    def delete_flows_strict(self, bridge: str, keys: Iterable[str]) -> None:
        text = "\n".join(self._by_number(k) for k in keys)
        if text:
            self.ofctl("--strict", "del-flows", bridge, "-", stdin=text + "\n")

    def delete_flows_by_cookie(self, bridge: str, cookie: int) -> None:
        self.ofctl("del-flows", bridge, f"cookie={cookie:#x}/-1")

    def dump_flows(self, bridge: str) -> list[str]:
        out = self.ofctl("--no-stats", "--names", "dump-flows", bridge)
        return [line.strip() for line in out.splitlines()
                if line.strip() and not line.startswith("NXST_FLOW")]

    def cookies(self, bridge: str) -> set[int]:
        found = set()
        for line in self.dump_flows(bridge):
            for part in line.replace(",", " ").split():
                if part.startswith("cookie="):
                    found.add(int(part.split("=", 1)[1], 16))
        return found

    # -- QoS: meters and egress shaping -------------------------------------------------

    def meters(self, bridge: str) -> dict[int, tuple[int, int]]:
        """Meter id -> (kbps, burst kb) of the bridge's meters."""
        out: dict[int, tuple[int, int]] = {}
        text = self.ofctl("-O", "OpenFlow13", "dump-meters", bridge)
        for block in re.split(r"\n(?=meter=)", text):
            m = re.search(r"meter=(\d+).*?rate=(\d+)(?:\s+burst_size=(\d+))?", block, re.S)
            if m:
                out[int(m.group(1))] = (int(m.group(2)), int(m.group(3) or 0))
        return out

    def set_meter(self, bridge: str, spec: str, exists: bool) -> None:
        self.ofctl("-O", "OpenFlow13", "mod-meter" if exists else "add-meter", bridge, spec)

    def delete_meter(self, bridge: str, meter_id: int) -> None:
        self.ofctl("-O", "OpenFlow13", "del-meter", bridge, f"meter={meter_id}")

    def set_port_shaping(self, port: str, kbps: int | None, burst_kb: int = 0) -> None:
        """Limit what the switch sends to ``port`` (``linux-htb``, one queue), or
        with ``kbps`` None stop limiting. QoS and Queue rows nobody references
        are removed by OVSDB itself."""
        if kbps is None:
            self.vsctl("--if-exists", "clear", "port", port, "qos")
            return
        rate, burst = kbps * 1000, burst_kb * 1000
        self.vsctl("set", "port", port, "qos=@q", "--", "--id=@q", "create", "qos",
                   "type=linux-htb", f"other-config:max-rate={rate}",
                   "external_ids:owner=neutrino-qos", "queues:0=@q0", "--", "--id=@q0",
                   "create", "queue", f"other-config:max-rate={rate}",
                   f"other-config:burst={burst}")

    def port_shapings(self) -> dict[str, tuple[int, int]]:
        """Port name -> (kbps, burst kb) of the shaping ``set_port_shaping`` made."""
        qos_rows = {_ovs_scalar(r["_uuid"]): r for r in
                    self._rows("QoS", "_uuid,external_ids,queues")}
        queues = {_ovs_scalar(r["_uuid"]): _ovs_map(r["other_config"])
                  for r in self._rows("Queue", "_uuid,other_config")}
        out = {}
        for port in self._rows("Port", "name,qos"):
            row = qos_rows.get(_ovs_scalar(port["qos"]))
            if row is None or _ovs_map(row["external_ids"]).get("owner") != "neutrino-qos":
                continue
            queue = queues.get(_ovs_scalar(dict(_ovs_map_uuid(row["queues"])).get(0)), {})
            out[port["name"]] = (int(queue.get("max-rate", 0)) // 1000,
                                 int(queue.get("burst", 0)) // 1000)
        return out
