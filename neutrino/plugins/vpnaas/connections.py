"""``ipsec_site_connections``: one tunnel of a VPN service to a peer.

What crosses it is either the legacy pair (the service's subnet and the
connection's ``peer_cidrs``) or two endpoint groups (local subnets on the
service's router, peer CIDRs), never a mix: upstream's rules and words
(``validate``). An update keeps what it does not name and is checked as a
whole again. A connection is ``PENDING_CREATE`` until the L3 agent hosting
its router reports it ``ACTIVE`` or ``DOWN``; while pending it cannot be
updated. ``dpd`` is stored as its three columns.
"""
from __future__ import annotations

import socket
from typing import Any, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.table_collection import TableCollection
from neutrino.plugins.vpnaas import endpoint_groups as egs
from neutrino.plugins.vpnaas import exceptions as exc
from neutrino.plugins.vpnaas import rows, services
from neutrino.resources import vpnaas as res

C, P = t.ipsec_site_connections, t.ipsec_peer_cidrs
COLUMNS = ("peer_address", "peer_id", "local_id", "mtu", "initiator", "psk",
           "admin_state_up", "local_ep_group_id", "peer_ep_group_id")
MIN_MTU = {4: 68, 6: 1280}


def _not_found(rid: str) -> Any:
    return lambda: exc.IPsecSiteConnectionNotFound(ipsec_site_conn_id=rid)


def _one_version(cidrs: list[str], mixed: Exception) -> int:
    versions = {egs.cidr_version(c) for c in cidrs}
    if len(versions) > 1:
        raise mixed
    return versions.pop()


def check_modes(conn_: dict[str, Any], subnet_id: str | None) -> None:
    """Legacy (service subnet + peer CIDRs) or endpoint groups, not both."""
    local, peer, cidrs = (conn_.get("local_ep_group_id"), conn_.get("peer_ep_group_id"),
                          conn_.get("peer_cidrs"))
    if subnet_id:
        if not cidrs:
            raise exc.MissingPeerCidrs()
        given = [w for w, g in (("local", local), ("peer", peer)) if g]
        if given:
            raise exc.InvalidEndpointGroup(which=" and ".join(given),
                                           suffix="s" if len(given) > 1 else "")
        return
    if cidrs:
        raise exc.PeerCidrsInvalid()
    missing = [w for w, g in (("local", local), ("peer", peer)) if not g]
    if missing:
        raise exc.MissingRequiredEndpointGroup(which=" and ".join(missing),
                                               suffix="s" if len(missing) > 1 else "")


class Connections(TableCollection):
    """The ``ipsec_site_connections`` collection."""

    table = C

    def not_found(self, rid: str) -> Exception:
        return _not_found(rid)()  # type: ignore[no-any-return]

    def to_dicts(self, conn: Connection, found: Sequence[Any]) -> list[dict[str, Any]]:
        cidrs = rows.children(conn, P, "ipsec_site_connection_id", "cidr",
                              [r.id for r in found])
        return [{**rows.named(r), **{c: getattr(r, c) for c in COLUMNS},
                 "route_mode": r.route_mode, "auth_mode": r.auth_mode, "status": r.status,
                 "vpnservice_id": r.vpnservice_id, "ikepolicy_id": r.ikepolicy_id,
                 "ipsecpolicy_id": r.ipsecpolicy_id, "peer_cidrs": cidrs[r.id],
                 "dpd": {"action": r.dpd_action, "interval": r.dpd_interval,
                         "timeout": r.dpd_timeout}} for r in found]

    # -- checks --------------------------------------------------------------------

    def validate(self, conn: Connection, ctx: Context, item: dict[str, Any],
                 service: Any) -> None:
        """Upstream's reference validator, in its order."""
        check_modes(item, service.subnet_id)
        if item.get("local_ep_group_id"):
            local = self.plugin.endpoint_groups.load(conn, ctx, item["local_ep_group_id"])
            peer = self.plugin.endpoint_groups.load(conn, ctx, item["peer_ep_group_id"])
            if local["type"] != res.SUBNET_ENDPOINT:
                raise exc.WrongEndpointGroupType(group_type=local["type"], which=local["id"],
                                                 expected=res.SUBNET_ENDPOINT)
            subnets = egs.visible_subnets(conn, Context.admin(), local["endpoints"])
            for subnet_id in local["endpoints"]:
                services.check_subnet_on_router(conn, service.router_id, subnet_id)
            versions = {s.ip_version for s in subnets.values()}
            if len(versions) > 1:
                raise exc.MixedIPVersionsForIPSecEndpoints(group=local["id"])
            local_version = versions.pop()
            if peer["type"] != res.CIDR_ENDPOINT:
                raise exc.WrongEndpointGroupType(group_type=peer["type"], which=peer["id"],
                                                 expected=res.CIDR_ENDPOINT)
            peer_version = _one_version(
                peer["endpoints"], exc.MixedIPVersionsForIPSecEndpoints(group=peer["id"]))
        else:
            local_version = conn.execute(sa.select(t.subnets.c.ip_version).where(
                t.subnets.c.id == service.subnet_id)).scalar()
            peer_version = _one_version(item["peer_cidrs"], exc.MixedIPVersionsForPeerCidrs())
        if local_version != peer_version:
            raise exc.MixedIPVersionsForIPSecConnection()
        if item["dpd_timeout"] <= item["dpd_interval"]:
            raise exc.IPsecSiteConnectionDpdIntervalValueError(attr="dpd_timeout")
        if item.get("mtu") and item["mtu"] < MIN_MTU[local_version]:
            raise exc.IPsecSiteConnectionMtuError(mtu=item["mtu"], version=local_version)

    def resolve_peer(self, conn: Connection, item: dict[str, Any], service: Any) -> None:
        """An FQDN peer becomes its address; the gateway must have one of its version."""
        address = item["peer_address"]
        try:
            version = netaddr.IPAddress(address, flags=netaddr.INET_PTON).version
        except (netaddr.AddrFormatError, ValueError, TypeError):
            try:
                address = socket.getaddrinfo(address, None)[0][-1][0]
            except (socket.gaierror, UnicodeError):
                raise exc.VPNPeerAddressNotResolved(peer_address=item["peer_address"]) from None
            item["peer_address"] = address
            version = netaddr.IPAddress(address).version
        gw = services.gateway_ips(conn, service.router_id)
        if services.first_of_version(gw, version) is None:
            raise exc.ExternalNetworkHasNoSubnet(router_id=service.router_id,
                                                 ip_version=f"IPv{version}")

    def _references(self, conn: Connection, ctx: Context, item: dict[str, Any]) -> Any:
        service = self.plugin.services.row(conn, ctx, item["vpnservice_id"])
        self.plugin.ikepolicies.row(conn, ctx, item["ikepolicy_id"])
        ipsec = self.plugin.ipsecpolicies.row(conn, ctx, item["ipsecpolicy_id"])
        self.plugin.ipsecpolicies.check({"transform_protocol": ipsec.transform_protocol})
        return service

    # -- writing -------------------------------------------------------------------

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        def op(conn: Connection) -> list[dict[str, Any]]:
            out = []
            for given in items:
                item = dict(given)
                dpd = {**res.DPD_DEFAULT, **(item.get("dpd") or {})}
                item.update(dpd_action=dpd["action"], dpd_interval=dpd["interval"],
                            dpd_timeout=dpd["timeout"])
                item["peer_cidrs"] = item.get("peer_cidrs") or []
                service = self._references(conn, ctx, item)
                self.validate(conn, ctx, item, service)
                self.resolve_peer(conn, item, service)
                row = {**rows.new_row(ctx, item), **{c: item.get(c) for c in COLUMNS},
                       "local_id": item.get("local_id") or "",
                       "route_mode": "static", "auth_mode": "psk",
                       "dpd_action": item["dpd_action"], "dpd_interval": item["dpd_interval"],
                       "dpd_timeout": item["dpd_timeout"], "status": "PENDING_CREATE",
                       "vpnservice_id": item["vpnservice_id"],
                       "ikepolicy_id": item["ikepolicy_id"],
                       "ipsecpolicy_id": item["ipsecpolicy_id"]}
                conn.execute(sa.insert(C).values(**row))
                self._write_cidrs(conn, row["id"], item["peer_cidrs"])
                out.append(self.load(conn, Context.admin(), row["id"]))
            return out
        made = self.plugin.core.write(op)
        for connection in made:
            self.plugin.notify_service(connection["vpnservice_id"])
        return made  # type: ignore[no-any-return]

    def _write_cidrs(self, conn: Connection, rid: str, cidrs: list[str]) -> None:
        conn.execute(sa.delete(P).where(P.c.ipsec_site_connection_id == rid))
        unique = list(dict.fromkeys(cidrs))
        if unique:
            conn.execute(sa.insert(P), [{"ipsec_site_connection_id": rid, "cidr": c,
                                         "position": i} for i, c in enumerate(unique)])

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        def op(conn: Connection) -> dict[str, Any]:
            row = self.row(conn, ctx, rid, for_update=True)
            current = self.load(conn, ctx, rid)
            service = self.plugin.services.row(conn, Context.admin(), row.vpnservice_id)
            item = {k: current[k] for k in ("peer_cidrs", "local_ep_group_id",
                                            "peer_ep_group_id", "mtu", "peer_address")}
            item.update({k: val for k, val in data.items() if k != "dpd"})
            if item.get("peer_cidrs") is None:
                item["peer_cidrs"] = []
            dpd = {**current["dpd"], **(data.get("dpd") or {})}
            item.update(dpd_action=dpd["action"], dpd_interval=dpd["interval"],
                        dpd_timeout=dpd["timeout"])
            self.validate(conn, ctx, item, service)
            if "peer_address" in data:
                self.resolve_peer(conn, item, service)
            services.refuse_pending(rid, row.status)
            values = {c: item[c] for c in COLUMNS if c in data or c == "peer_address"}
            if "dpd" in data:
                values.update(dpd_action=item["dpd_action"], dpd_interval=item["dpd_interval"],
                              dpd_timeout=item["dpd_timeout"])
            conn.execute(sa.update(C).where(C.c.id == rid).values(**values))
            if "peer_cidrs" in data:
                self._write_cidrs(conn, rid, item["peer_cidrs"])
            return self.load(conn, ctx, rid)
        done = self.plugin.core.write(op)
        self.plugin.notify_service(done["vpnservice_id"])
        return done  # type: ignore[no-any-return]

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> str:
            row = self.row(conn, ctx, rid, for_update=True)
            conn.execute(sa.delete(P).where(P.c.ipsec_site_connection_id == rid))
            conn.execute(sa.delete(C).where(C.c.id == rid))
            return str(row.vpnservice_id)
        self.plugin.notify_service(self.plugin.core.write(op))
