"""What an L3 agent's VPN extension runs: the VPN services of the routers
it hosts that have connections, each with its connections, their policies
and the CIDRs on both sides (upstream's ``make_vpnservice_dict``); and the
statuses it reports back (upstream's ``update_status_by_agent``).
"""
from __future__ import annotations

from typing import Any

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins.vpnaas import rows
from neutrino.plugins.vpnaas.connections import Connections
from neutrino.plugins.vpnaas.policies import IkePolicies, IpsecPolicies
from neutrino.plugins.vpnaas.services import PENDING, to_dict

S, C = t.vpnservices, t.ipsec_site_connections


def _peer_id(value: str) -> str:
    """An identity that is not an address is an FQDN (strongSwan's ``@``)."""
    if not value:
        return value
    try:
        netaddr.IPAddress(value)
        return value
    except (netaddr.AddrFormatError, ValueError):
        return value if value.startswith("@") else "@" + value


def services_on_host(conn: Connection, plugin: Any, host: str) -> list[dict[str, Any]]:
    b, a = t.routerl3agentbindings.c, t.agents.c
    services = list(conn.execute(
        sa.select(S).join(t.routerl3agentbindings, b.router_id == S.c.router_id)
        .join(t.agents, a.id == b.l3_agent_id)
        .where(a.host == host, a.admin_state_up.is_(True),
               sa.exists().where(C.c.vpnservice_id == S.c.id))
        .order_by(S.c.id)))
    if not services:
        return []
    conns = list(conn.execute(sa.select(C).where(
        C.c.vpnservice_id.in_([s.id for s in services])).order_by(C.c.id)))
    shown = Connections(plugin).to_dicts(conn, conns)
    ike = {r.id: IkePolicies(plugin).to_dict(r) for r in conn.execute(
        sa.select(t.vpn_ikepolicies).where(t.vpn_ikepolicies.c.id.in_(
            [c.ikepolicy_id for c in conns])))}
    ipsec = {r.id: IpsecPolicies(plugin).to_dict(r) for r in conn.execute(
        sa.select(t.vpn_ipsecpolicies).where(t.vpn_ipsecpolicies.c.id.in_(
            [c.ipsecpolicy_id for c in conns])))}
    group_ids = [g for c in conns for g in (c.local_ep_group_id, c.peer_ep_group_id) if g]
    endpoints = rows.children(conn, t.vpn_endpoints, "endpoint_group_id", "endpoint",
                              group_ids)
    subnet_cidrs = {r.id: r.cidr for r in conn.execute(sa.select(
        t.subnets.c.id, t.subnets.c.cidr).where(t.subnets.c.id.in_(
            [e for eps in endpoints.values() for e in eps] +
            [s.subnet_id for s in services if s.subnet_id])))}
    out = []
    for service in services:
        item = to_dict(service)
        item["ipsec_site_connections"] = []
        for row, shown_conn in zip(conns, shown):
            if row.vpnservice_id != service.id:
                continue
            if service.subnet_id:
                local = [subnet_cidrs[service.subnet_id]]
                peer = shown_conn["peer_cidrs"]
            else:
                local = [subnet_cidrs[e] for e in endpoints.get(row.local_ep_group_id, [])
                         if e in subnet_cidrs]
                peer = endpoints.get(row.peer_ep_group_id, [])
            version = netaddr.IPAddress(row.peer_address).version
            item["ipsec_site_connections"].append({
                **shown_conn, "local_cidrs": local, "peer_cidrs": peer,
                "peer_id": _peer_id(row.peer_id), "local_id": _peer_id(row.local_id),
                "external_ip": service.external_v4_ip if version == 4
                else service.external_v6_ip,
                "ikepolicy": ike[row.ikepolicy_id], "ipsecpolicy": ipsec[row.ipsecpolicy_id]})
        out.append(item)
    return out


def update_statuses(conn: Connection, statuses: list[dict[str, Any]]) -> None:
    """An agent's report: a pending status changes only when the agent says
    it acted on it (``updated_pending_status``), as upstream."""
    for service in statuses:
        row = conn.execute(sa.select(S.c.status).where(S.c.id == service["id"])).first()
        if row is None:
            continue
        if row.status not in PENDING or service.get("updated_pending_status"):
            conn.execute(sa.update(S).where(S.c.id == service["id"]).values(
                status=service["status"]))
        for conn_id, state in (service.get("ipsec_site_connections") or {}).items():
            current = conn.execute(sa.select(C.c.status).where(C.c.id == conn_id)).first()
            if current is None:
                continue
            if current.status not in PENDING or state.get("updated_pending_status"):
                conn.execute(sa.update(C).where(C.c.id == conn_id).values(
                    status=state["status"]))
