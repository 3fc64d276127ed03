"""What DHCP agents ask the server (topic ``q-plugin``, namespace None as
upstream's, ``dhcp`` still accepted for neutrino's earlier agents).

Upstream's method names, arguments and answers, so an upstream DHCP agent
can use this server: the networks an agent serves with their DHCP-enabled
subnets and their ports (``get_active_networks_info``, ``get_network_info``),
the agent's own DHCP port (``create_dhcp_port``, ``update_dhcp_port``,
``release_dhcp_port``, ``get_dhcp_port``), and ``dhcp_ready_on_ports``, which
lifts the DHCP provisioning block of ports the agent has configured.
``create_dhcp_ports`` is neutrino's own (1.11): a cold agent's DHCP ports of
every network in one call, so that a sync costs a few calls, not a few per
network; ``dhcp_ready_on_ports`` costs a few statements whatever the number
of ports.
"""
from __future__ import annotations

import logging
from typing import Any

import oslo_messaging
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.dhcp import scheduler as sch
from neutrino.plugins.dhcp.hosting import Hosting
from neutrino.plugins.ml2 import provisioning
from neutrino.resources.dhcp import dhcp_device_id
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)

# 1.x as upstream (1.10: get_network_info with segments); new methods bump the minor
# (1.11: neutrino's ``create_dhcp_ports``, one call for a sync's DHCP ports).
VERSION = "1.11"
N, P, B, NB = t.networks.c, t.ports.c, t.ml2_port_bindings.c, t.networkdhcpagentbindings.c
_PORT_KEYS = ("network_id", "name", "admin_state_up", "device_id", "device_owner",
              "fixed_ips", "mac_address", "description")


def _query(**filters: list[Any]) -> store.ListQuery:
    return store.ListQuery(filters=dict(filters))


class DhcpEndpoint:
    target = oslo_messaging.Target(version=VERSION,
                                   legacy_namespaces=[topics.LEGACY_DHCP_NAMESPACE])

    def __init__(self, core: Any, hosting: Hosting) -> None:
        self.core = core
        self.hosting = hosting

    # -- networks ------------------------------------------------------------------------

    def _active_network_ids(self, conn: Connection, host: str | None) -> list[str]:
        agent = sch.agent_by_host(conn, host or "", self.hosting.down_time)
        if agent is None or not self.hosting.usable(agent):
            return []
        return [r.id for r in conn.execute(
            sa.select(N.id).join(t.networkdhcpagentbindings, NB.network_id == N.id)
            .where(NB.dhcp_agent_id == agent.id, N.admin_state_up.is_(True))
            .order_by(N.id))]

    def _infos(self, network_ids: list[str], enable_dhcp: bool | None) -> list[dict[str, Any]]:
        """Network infos in a few bulk queries, whatever the number of networks."""
        if not network_ids:
            return []
        admin = Context.admin()
        networks, _ = self.core.list(admin, "networks", _query(id=network_ids))
        subnet_filters: dict[str, list[Any]] = {"network_id": network_ids}
        if enable_dhcp is not None:
            subnet_filters["enable_dhcp"] = [enable_dhcp]
        subnets, _ = self.core.list(admin, "subnets", _query(**subnet_filters))
        ports, _ = self.core.list(admin, "ports", _query(network_id=network_ids))
        by_net: dict[str, dict[str, list[Any]]] = {
            n: {"subnets": [], "ports": []} for n in network_ids}
        for subnet in subnets:
            by_net[subnet["network_id"]]["subnets"].append(subnet)
        for port in ports:
            by_net[port["network_id"]]["ports"].append(port)
        return [{"id": net["id"], "project_id": net["project_id"],
                 "admin_state_up": net["admin_state_up"],
                 "subnets": sorted(by_net[net["id"]]["subnets"], key=lambda s: s["id"]),
                 "non_local_subnets": [],
                 "ports": by_net[net["id"]]["ports"], "mtu": net.get("mtu")}
                for net in networks]

    def get_active_networks_info(self, context: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """Every network the agent on ``host`` serves, after giving it the
        networks that lack agents (``network_auto_schedule``)."""
        host = kwargs.get("host")
        self.core.write(lambda conn: self.hosting.auto_schedule(conn, host or ""))
        with self.core.db.reader() as conn:
            ids = self._active_network_ids(conn, host)
        enable_dhcp = True if kwargs.get("enable_dhcp_filter", True) else None
        return self._infos(ids, enable_dhcp)

    def get_network_info(self, context: Any, **kwargs: Any) -> dict[str, Any] | None:
        network_id = kwargs.get("network_id")
        found = self._infos([network_id], kwargs.get("enable_dhcp", True)) if network_id else []
        if not found:
            LOG.debug("network %s requested by %s not found", network_id, kwargs.get("host"))
            return None
        return found[0]

    # -- the agent's DHCP ports ------------------------------------------------------------

    @oslo_messaging.expected_exceptions(errors.IpAddressGenerationFailure)
    def create_dhcp_port(self, context: Any, **kwargs: Any) -> dict[str, Any] | None:
        host = kwargs.get("host") or ""
        data = self._port_data((kwargs.get("port") or {}).get("port") or {}, host)
        try:
            return self.core.create(Context.admin(), "ports", [data])[0]
        except (errors.NetworkNotFound, errors.SubnetNotFound, errors.InvalidInput) as exc:
            LOG.warning("create_dhcp_port for network %s from %s: %s",
                        data.get("network_id"), host, exc)
            return None
        except errors.IpAddressGenerationFailure:
            if self._subnets_gone(data):
                return None  # the subnet went away meanwhile: not the agent's problem
            raise

    def create_dhcp_ports(self, context: Any, **kwargs: Any) -> list[dict[str, Any] | None]:
        """``create_dhcp_port`` for many networks: one bulk create when all
        can be made, else one by one, so that one network's trouble (a full
        subnet, a network deleted meanwhile) costs only its own port; the
        answers in the order asked, None where no port was made."""
        host = kwargs.get("host") or ""
        wanted = [(p or {}).get("port") or {} for p in kwargs.get("ports") or []]
        if not wanted:
            return []
        try:
            return list(self.core.create(Context.admin(), "ports",
                                         [self._port_data(p, host) for p in wanted]))
        except errors.NeutronException:  # one of them: find which
            LOG.info("create_dhcp_ports from %s: bulk create failed, one by one", host)
        out: list[dict[str, Any] | None] = []
        for port in wanted:
            try:
                out.append(self.create_dhcp_port(context, host=host, port={"port": port}))
            except errors.IpAddressGenerationFailure as exc:
                LOG.warning("create_dhcp_ports for network %s from %s: %s",
                            port.get("network_id"), host, exc)
                out.append(None)
        return out

    @staticmethod
    def _port_data(wanted: dict[str, Any], host: str) -> dict[str, Any]:
        data = {k: wanted[k] for k in _PORT_KEYS if k in wanted}
        data["project_id"] = wanted.get("project_id", wanted.get("tenant_id", ""))
        data["device_owner"] = sch.DEVICE_OWNER_DHCP
        data["binding:host_id"] = host
        return data

    def _subnets_gone(self, data: dict[str, Any]) -> bool:
        ids = [f.get("subnet_id") for f in data.get("fixed_ips") or [] if f.get("subnet_id")]
        with self.core.db.reader() as conn:
            found = conn.execute(sa.select(sa.func.count()).select_from(t.subnets)
                                 .where(t.subnets.c.id.in_(ids))).scalar() if ids else 0
        return bool(ids) and found < len(ids)

    @oslo_messaging.expected_exceptions(errors.NetworkNotFound,
                                        errors.IpAddressGenerationFailure)
    def update_dhcp_port(self, context: Any, **kwargs: Any) -> dict[str, Any] | None:
        host = kwargs.get("host") or ""
        port_id = kwargs.get("port_id") or ""
        wanted = dict((kwargs.get("port") or {}).get("port") or {})
        network_id = wanted.get("network_id")
        admin = Context.admin()
        try:
            old = self.core.get(admin, "ports", port_id)
        except errors.PortNotFound:
            LOG.debug("host %s updates port %s, which is gone", host, port_id)
            return None
        network_id = network_id or old["network_id"]
        if old["device_id"] not in (sch.RESERVED_DHCP_PORT,
                                    dhcp_device_id(network_id, host)):
            return None
        with self.core.db.reader() as conn:
            hosts = {a.host for a in self.hosting.hosting(conn, network_id)}
        if host not in hosts:
            LOG.warning("The DHCP agent on %s does not host the network %s.", host, network_id)
            raise errors.NetworkNotFound(net_id=network_id)
        data = {k: wanted[k] for k in _PORT_KEYS if k in wanted and k != "network_id"}
        data["binding:host_id"] = host
        try:
            return self.core.update(admin, "ports", port_id, data)
        except errors.PortNotFound:
            return None

    def release_dhcp_port(self, context: Any, **kwargs: Any) -> None:
        network_id, device_id = kwargs.get("network_id"), kwargs.get("device_id")
        with self.core.db.reader() as conn:
            ids = [r.id for r in conn.execute(sa.select(P.id).where(
                P.network_id == network_id, P.device_id == device_id))]
        for port_id in ids:
            try:
                self.core.delete(Context.admin(), "ports", port_id)
            except errors.PortNotFound:
                pass  # gone meanwhile

    def get_dhcp_port(self, context: Any, **kwargs: Any) -> dict[str, Any]:
        return self.core.get(Context.admin(), "ports", kwargs.get("port_id") or "")

    def dhcp_ready_on_ports(self, context: Any, port_ids: list[str]) -> None:
        """The agent has configured these ports: lift their DHCP block; a
        bound port nothing else blocks becomes ACTIVE. A few statements a
        chunk of ports: a restarted agent reports every port it serves."""
        def op(conn: Connection) -> None:
            ready = provisioning.complete_many(conn, list(dict.fromkeys(port_ids)),
                                               provisioning.DHCP_ENTITY)
            for part in store.chunks(ready):
                wired = [r.port_id for r in conn.execute(
                    sa.select(B.port_id).join(t.ports, P.id == B.port_id).where(
                        B.port_id.in_(part), B.host != "",
                        B.vif_type.not_in(("unbound", "binding_failed")),
                        P.status != "ACTIVE"))]
                if wired:
                    store.bump_where(conn, t.ports, P.id.in_(wired),
                                     values={"status": "ACTIVE"})
        self.core.write(op)
