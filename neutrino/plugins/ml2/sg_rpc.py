"""What L2 agents ask about security groups (upstream's
``SecurityGroupServerRpcCallback`` on ``q-plugin``).

``security_group_info_for_devices`` answers, for the devices an agent
wires, the groups' rules once per group and the members of every group a
rule names as remote (``sg_member_ips``), so the agent filters by sets of
addresses; ``security_group_rules_for_devices`` is the older form with
the rules expanded per device. Either answer costs a fixed number of
queries whatever the number of devices, groups or members.

Ports the network owns (DHCP, routers) are trusted and left out, as
upstream does. Each device also gets the "provider" rules every port
needs whatever its groups say (DHCP replies, IPv6 router advertisements).
"""
from __future__ import annotations

import copy
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Iterable

import netaddr
import oslo_messaging
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins import ports as ports_mod
from neutrino.plugins.ml2.agent_notifier import is_trusted
from neutrino.rpc import topics

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin

P, SGB = t.ports.c, t.securitygroupportbindings.c
R, SG = t.securitygrouprules.c, t.securitygroups.c
IPA, AAP = t.ipallocations.c, t.allowed_address_pairs.c
AGA = t.address_associations.c

DIRECTION_PREFIX = {"ingress": "source_ip_prefix", "egress": "dest_ip_prefix"}
# ip version -> (server port, client port, ethertype)
DHCP_PORTS = {4: (67, 68, "IPv4"), 6: (547, 546, "IPv6")}
ICMPV6_TYPE_RA = 134
RULE_KEYS = ("protocol", "port_range_min", "port_range_max", "remote_ip_prefix",
             "remote_group_id", "remote_address_group_id")


def _version(ip: str) -> int:
    return int(netaddr.IPNetwork(ip).version)


def provider_rules(fixed_ips: list[str]) -> list[dict[str, Any]]:
    """Rules every port gets: router advertisements (if it has IPv6) and
    DHCP replies to its own addresses (or broadcast / link-local)."""
    out: list[dict[str, Any]] = []
    if any(_version(ip) == 6 for ip in fixed_ips):
        out.append({"direction": "ingress", "ethertype": "IPv6", "protocol": "ipv6-icmp",
                    "source_port_range_min": ICMPV6_TYPE_RA})
    for version in (4, 6):
        server, client, ethertype = DHCP_PORTS[version]
        bits = 32 if version == 4 else 128
        dests = [f"{ip}/{bits}" for ip in fixed_ips if _version(ip) == version]
        dests.append("255.255.255.255/32" if version == 4 else "fe80::/64")
        out.extend({"direction": "ingress", "ethertype": ethertype, "protocol": "udp",
                    "port_range_min": client, "port_range_max": client,
                    "source_port_range_min": server, "source_port_range_max": server,
                    "dest_ip_prefix": dest} for dest in dests)
    return out


class SecurityGroupEndpoint:
    target = oslo_messaging.Target(version=topics.SG_PLUGIN_VERSION)

    def __init__(self, plugin: CorePlugin) -> None:
        self.plugin = plugin

    # -- lookups (each one query) ------------------------------------------------------

    def _devices(self, conn: Connection, devices: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Port dicts by port id for the devices (ids or tap-name prefixes),
        untrusted ports only, each with ``device`` as the agent named it."""
        devices = [d for d in dict.fromkeys(devices or []) if d]
        if not devices:
            return {}
        full = [d for d in devices if len(d) >= 36]
        short = [d for d in devices if len(d) < 36]
        clauses = [P.id.in_(full)] if full else []
        clauses += [P.id.startswith(d) for d in short]
        rows = list(conn.execute(sa.select(t.ports).where(sa.or_(*clauses))))
        items = self.plugin.completed(conn, "ports", ports_mod.to_dicts(conn, rows))
        out: dict[str, dict[str, Any]] = {}
        for port in items:
            if is_trusted(port):
                continue
            named = next((d for d in devices if port["id"].startswith(d)), port["id"])
            port.update(device=named, security_group_rules=[],
                        security_group_source_groups=[],
                        fixed_ips=[ip["ip_address"] for ip in port["fixed_ips"]])
            out[port["id"]] = port
        return out

    @staticmethod
    def _rules(conn: Connection, port_ids: list[str]) -> list[tuple[str, Any]]:
        query = (sa.select(SGB.port_id, t.securitygrouprules, SG.stateful)
                 .join(t.securitygrouprules, R.security_group_id == SGB.security_group_id)
                 .join(t.securitygroups, SG.id == SGB.security_group_id)
                 .where(SGB.port_id.in_(port_ids)).order_by(R.created_at, R.id))
        return [(row.port_id, row) for row in conn.execute(query)]

    @staticmethod
    def _member_ips(conn: Connection, group_ids: list[str]) -> dict[str, set[tuple[str, Any]]]:
        """Addresses of the ports in each group (fixed IPs, and address pairs
        with their MAC), as upstream's (ip, mac) pairs."""
        out: dict[str, set[tuple[str, Any]]] = {g: set() for g in group_ids}
        if not group_ids:
            return out
        for row in conn.execute(sa.select(SGB.security_group_id, IPA.ip_address)
                                .join(t.ipallocations, IPA.port_id == SGB.port_id)
                                .where(SGB.security_group_id.in_(group_ids))):
            out[row.security_group_id].add((row.ip_address, None))
        for row in conn.execute(sa.select(SGB.security_group_id, AAP.ip_address,
                                          AAP.mac_address)
                                .join(t.allowed_address_pairs, AAP.port_id == SGB.port_id)
                                .where(SGB.security_group_id.in_(group_ids))):
            out[row.security_group_id].add((row.ip_address, row.mac_address))
        return out

    @staticmethod
    def _address_group_ips(conn: Connection,
                           group_ids: list[str]) -> dict[str, set[tuple[str, Any]]]:
        out: dict[str, set[tuple[str, Any]]] = {g: set() for g in group_ids}
        if group_ids:
            for row in conn.execute(sa.select(AGA.address_group_id, AGA.address)
                                    .where(AGA.address_group_id.in_(group_ids))):
                out[row.address_group_id].add((row.address, None))
        return out

    @staticmethod
    def _rule_dict(row: Any) -> dict[str, Any]:
        rule: dict[str, Any] = {"direction": row.direction, "ethertype": row.ethertype}
        for key in RULE_KEYS:
            value = getattr(row, key)
            if value is None:
                continue
            if key == "remote_ip_prefix":
                rule[DIRECTION_PREFIX[row.direction]] = row.normalized_cidr or value
            else:
                rule[key] = value
        return rule

    # -- calls ----------------------------------------------------------------------

    def security_group_info_for_devices(self, context: Any, **kwargs: Any) -> dict[str, Any]:
        with self.plugin.db.reader() as conn:
            devices = self._devices(conn, kwargs.get("devices") or [])
            info: dict[str, Any] = {"devices": devices, "security_groups": {},
                                    "sg_member_ips": {}}
            if not devices:
                return info
            ids = list(devices)
            remote: dict[str, set[str]] = defaultdict(set)  # group -> ethertypes
            remote_ag: dict[str, set[str]] = defaultdict(set)
            groups: dict[str, list[dict[str, Any]]] = info["security_groups"]
            for port_id, row in self._rules(conn, ids):
                device = devices[port_id]
                if row.remote_group_id:
                    if row.remote_group_id not in device["security_group_source_groups"]:
                        device["security_group_source_groups"].append(row.remote_group_id)
                    remote[row.remote_group_id].add(row.ethertype)
                elif row.remote_address_group_id:
                    named = device.setdefault("security_group_remote_address_groups", [])
                    if row.remote_address_group_id not in named:
                        named.append(row.remote_address_group_id)
                    remote_ag[row.remote_address_group_id].add(row.ethertype)
                rule = {**self._rule_dict(row), "stateful": bool(row.stateful)}
                rules = groups.setdefault(row.security_group_id, [])
                if rule not in rules:
                    rules.append(rule)
            for row in conn.execute(sa.select(SGB.security_group_id)
                                    .where(SGB.port_id.in_(ids)).distinct()):
                groups.setdefault(row.security_group_id, [])
            members = self._member_ips(conn, sorted(remote))
            members.update(self._address_group_ips(conn, sorted(remote_ag)))
        wanted = {**remote, **remote_ag}
        for group_id, ethertypes in wanted.items():
            info["sg_member_ips"][group_id] = {
                e: sorted([list(m) for m in members.get(group_id, ())
                           if f"IPv{_version(m[0])}" == e], key=lambda m: m[0])
                for e in sorted(ethertypes)}
        for device in devices.values():
            device["security_group_rules"] = provider_rules(device["fixed_ips"])
        return info

    def security_group_rules_for_devices(self, context: Any, **kwargs: Any) -> dict[str, Any]:
        """Each device's rules, remote groups expanded to one rule per member
        address (the device's own addresses left out)."""
        with self.plugin.db.reader() as conn:
            devices = self._devices(conn, kwargs.get("devices") or [])
            if not devices:
                return {}
            rows = self._rules(conn, list(devices))
            members = self._member_ips(conn, sorted({r.remote_group_id for _, r in rows
                                                     if r.remote_group_id}))
            members.update(self._address_group_ips(conn, sorted(
                {r.remote_address_group_id for _, r in rows if r.remote_address_group_id})))
        for device in devices.values():
            device["security_group_rules"] = provider_rules(device["fixed_ips"])
            device.setdefault("security_group_remote_address_groups", [])
        for port_id, row in rows:
            device = devices[port_id]
            rule = {"security_group_id": row.security_group_id, **self._rule_dict(row)}
            remote_id = row.remote_group_id or row.remote_address_group_id
            if not remote_id:
                device["security_group_rules"].append(rule)
                continue
            key = ("security_group_source_groups" if row.remote_group_id
                   else "security_group_remote_address_groups")
            device[key].append(remote_id)
            for ip in sorted({m[0] for m in members.get(remote_id, ())}):
                if ip in device["fixed_ips"] or f"IPv{_version(ip)}" != row.ethertype:
                    continue
                expanded = copy.copy(rule)
                expanded[DIRECTION_PREFIX[row.direction]] = str(netaddr.IPNetwork(ip).cidr)
                device["security_group_rules"].append(expanded)
        return devices
