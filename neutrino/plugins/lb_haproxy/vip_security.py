"""The security group that lets clients reach a load balancer, as Octavia
keeps one for its amphorae.

A load balancer created without ``vip_sg_ids`` gets group ``lb-<id>`` in
its project: one ingress rule per listener port (TCP; UDP or SCTP for
UDP and SCTP listeners; from each of the listener's ``allowed_cidrs``, or from anywhere), and for an
``ACTIVE_STANDBY`` pair VRRP (IP protocol 112) between its own ports. It is
the only group of the ports that carry the VIP (the VIP port, or the
pair's VRRP ports), kept in step with every change, and deleted with the
load balancer. With ``vip_sg_ids`` the caller's groups are the VIP's, as
Octavia leaves them.
"""
from __future__ import annotations

import ipaddress
import logging
from typing import Any

import sqlalchemy as sa

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.resources import lb_haproxy
from neutrino.resources.lb_graph import LoadBalancer

LOG = logging.getLogger(__name__)
SG, R = t.securitygroups.c, t.securitygrouprules.c
VRRP_PROTOCOL = "112"


def group_name(lb_id: str) -> str:
    return f"lb-{lb_id}"


def wanted_rules(lb: LoadBalancer, group_id: str) -> set[tuple[Any, ...]]:
    """(ethertype, protocol, port, remote prefix, remote group) of each ingress rule."""
    ethertype = "IPv6" if ipaddress.ip_address(lb.vip.address).version == 6 else "IPv4"
    out: set[tuple[Any, ...]] = set()
    for listener in lb_haproxy.live(lb.listeners):
        protocol = listener.protocol.lower() if lb_haproxy.by_nftables(
            listener.protocol) else "tcp"
        for cidr in listener.allowed_cidrs or (None,):
            out.add((ethertype, protocol, listener.protocol_port, cidr, None))
    if lb_haproxy.topology_of(lb) == lb_haproxy.ACTIVE_STANDBY:
        out.add((ethertype, VRRP_PROTOCOL, None, None, group_id))
    return out


class VipSecurity:
    def __init__(self, core: Any, db: Any) -> None:
        self.core, self.db = core, db

    def _group(self, lb: LoadBalancer) -> str | None:
        with self.db.reader() as conn:
            row = conn.execute(sa.select(SG.id).where(
                SG.name == group_name(lb.id), SG.project_id == lb.project_id)).first()
        return row.id if row else None

    def sync(self, lb: LoadBalancer, port_ids: list[str]) -> None:
        """The group as ``lb`` wants it, and the only group of ``port_ids``."""
        if lb.vip.sg_ids:
            return
        admin = Context.admin()
        group_id = self._group(lb)
        if group_id is None:
            group_id = self.core.create(admin, "security_groups", [{
                "name": group_name(lb.id), "project_id": lb.project_id,
                "description": f"Load balancer {lb.id} (haproxy provider)"}])[0]["id"]
        want = wanted_rules(lb, group_id)
        with self.db.reader() as conn:
            rows = conn.execute(sa.select(
                R.id, R.ethertype, R.protocol, R.port_range_min, R.remote_ip_prefix,
                R.remote_group_id).where(R.security_group_id == group_id,
                                         R.direction == "ingress")).all()
        have = {(r.ethertype, r.protocol, r.port_range_min, r.remote_ip_prefix,
                 r.remote_group_id): r.id for r in rows}
        for key, rule_id in have.items():
            if key not in want:
                self.core.delete(admin, "security_group_rules", rule_id)
        for ethertype, protocol, port, prefix, remote in sorted(
                want - set(have), key=repr):
            rule: dict[str, Any] = {"security_group_id": group_id, "direction": "ingress",
                                    "ethertype": ethertype, "protocol": protocol,
                                    "project_id": lb.project_id}
            if port is not None:
                rule.update(port_range_min=port, port_range_max=port)
            if prefix:
                rule["remote_ip_prefix"] = prefix
            if remote:
                rule["remote_group_id"] = remote
            self.core.create(admin, "security_group_rules", [rule])
        for port_id in port_ids:
            port = self.core.get(admin, "ports", port_id)
            if port.get("security_groups") != [group_id]:
                self.core.update(admin, "ports", port_id, {"security_groups": [group_id]})

    def remove(self, lb: LoadBalancer) -> None:
        """The group goes with the load balancer (once no port holds it)."""
        group_id = self._group(lb)
        if group_id is None:
            return
        try:
            self.core.delete(Context.admin(), "security_groups", group_id)
        except Exception:  # noqa: BLE001 - a port the caller gave still holds it
            LOG.warning("security group %s of load balancer %s stays: still in use",
                        group_id, lb.id)
