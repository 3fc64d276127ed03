"""``l3-ha``: HA (VRRP) routers, as the API and the server keep them.

An HA router runs on several L3 agents at once, one of them active. What
that means for the API and the database (upstream's contract; keepalived
on the hosts belongs to the agents):

- each project with HA routers has one HA network, owned by no project
  (``HA network project <project>``, with the subnet ``l3_ha_net_cidr``,
  no DHCP, no gateway); one row per project in ``ha_router_networks``
  makes a second one lose its race; the network goes when a router stops
  being HA or is deleted and no HA router of the project is left;
- for every L3 agent an HA router is scheduled to, the router has a
  ``network:router_ha_interface`` port on that network (none without
  agents), bound to the agent with the state the agent last reported
  (``update_ha_routers_states``), shown as ``ha_state`` in
  ``/routers/{id}/l3-agents``;
- each HA router holds a VRRP router id (1-255) unique on its HA network,
  the lowest free one, from its first HA port until it stops being HA
  (``ha_router_vrid_allocations``; sync data ``ha_vr_id``);
- its interface ports are ``network:ha_router_replicated_interface``
  unless it is also distributed;
- ``ha`` changes only while the router is (or becomes, in the same
  request) administratively down.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins.l3 import common as c

if TYPE_CHECKING:
    from oslo_config import cfg

    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin

LOG = logging.getLogger(__name__)

HA_INTERFACE = "network:router_ha_interface"
NETWORK_NAME = "HA network project %s"
SUBNET_NAME = "HA subnet project %s"
PORT_NAME = "HA port project %s"
STATES = ("active", "standby", "unknown")

_NET = t.ha_router_networks.c
_BIND = t.ha_router_agent_port_bindings.c
_VRID = t.ha_router_vrid_allocations.c
VR_IDS = range(1, 256)  # VRRP's router ids


def check_migration(router: Any, data: dict[str, Any]) -> bool:
    """Whether ``ha`` really changes; refused unless the router ends up down."""
    wanted = data.get("ha")
    if wanted is None or bool(router.ha) == wanted:
        return False
    if data.get("admin_state_up", router.admin_state_up):
        raise c.bad_router("Cannot change HA attribute of active routers. Please set "
                           "router admin_state_up to False prior to upgrade")
    return True


def network_id(conn: Connection, project_id: str) -> str | None:
    return conn.execute(sa.select(_NET.network_id)
                        .where(_NET.project_id == project_id)).scalar()


@dataclass(eq=False)
class HighAvailability:
    """Keeps HA networks, HA ports and their agents' states."""

    core: CorePlugin
    conf: cfg.ConfigOpts
    db: Database

    # -- the project's HA network ------------------------------------------------

    def ensure_network(self, project_id: str) -> str:
        """The project's HA network, made (once) if it has none."""
        with self.db.reader() as conn:
            existing = network_id(conn, project_id)
        if existing is not None:
            return existing
        body: dict[str, Any] = {"name": NETWORK_NAME % project_id, "project_id": "",
                                "shared": False, "admin_state_up": True}
        if self.conf.l3_ha_network_type:
            body["provider:network_type"] = self.conf.l3_ha_network_type
        if self.conf.l3_ha_network_physical_name:
            body["provider:physical_network"] = self.conf.l3_ha_network_physical_name
        net = self.core.create(c.internal(), "networks", [body])[0]
        try:
            self.core.create(c.internal(), "subnets", [{
                "network_id": net["id"], "project_id": "", "name": SUBNET_NAME % project_id,
                "ip_version": 4, "cidr": self.conf.l3_ha_net_cidr, "enable_dhcp": False,
                "gateway_ip": None}])

            def claim(conn: Connection) -> str:
                try:
                    with conn.begin_nested():
                        conn.execute(sa.insert(t.ha_router_networks).values(
                            project_id=project_id, network_id=net["id"]))
                except sa_exc.IntegrityError:
                    pass  # another request made it first: theirs is the one
                return network_id(conn, project_id) or net["id"]
            winner = self.core.write(claim)
        except Exception:
            self._drop_network(net["id"])
            raise
        if winner != net["id"]:
            self._drop_network(net["id"])
        return winner

    def cleanup_network(self, project_id: str) -> None:
        """Delete the project's HA network once none of its routers is HA."""
        with self.db.reader() as conn:
            net = network_id(conn, project_id)
            left = conn.execute(sa.select(t.routers.c.id).where(
                t.routers.c.project_id == project_id, t.routers.c.ha.is_(True))
                .limit(1)).first()
        if net is not None and left is None:
            self._drop_network(net)

    def _drop_network(self, net_id: str) -> None:
        try:
            self.core.delete(c.internal(), "networks", net_id)
        except (errors.NetworkNotFound, errors.NetworkInUse):
            pass  # gone already, or still used: the next cleanup tries again

    # -- HA ports ------------------------------------------------------------------

    def add_port(self, router_id: str, agent_id: str | None) -> None:
        """The router's port on its project's HA network for one agent."""
        with self.db.reader() as conn:
            router = conn.execute(sa.select(t.routers).where(t.routers.c.id == router_id)).first()
        if router is None or not router.ha:
            return
        net_id = self.ensure_network(router.project_id)
        self.ensure_vr_id(router_id, net_id)
        port = self.core.create(c.internal(), "ports", [{
            "project_id": "", "network_id": net_id, "name": PORT_NAME % router.project_id,
            "admin_state_up": True, "device_id": router_id, "device_owner": HA_INTERFACE,
            "port_security_enabled": False}])[0]

        def link(conn: Connection) -> None:
            c.lock_router(conn, router_id)
            conn.execute(sa.insert(t.routerports).values(
                router_id=router_id, port_id=port["id"], port_type=HA_INTERFACE))
            conn.execute(sa.insert(t.ha_router_agent_port_bindings).values(
                port_id=port["id"], router_id=router_id, l3_agent_id=agent_id,
                state="standby"))
        try:
            self.core.write(link)
        except Exception:
            self.core.delete(c.internal(), "ports", port["id"])
            raise

    def ensure_vr_id(self, router_id: str, net_id: str) -> int:
        """The router's VRRP id on its HA network: the lowest free one, kept
        until the router stops being HA (so other routers never renumber)."""
        def claim(conn: Connection) -> int | None:
            mine = conn.execute(sa.select(_VRID.vr_id).where(
                _VRID.router_id == router_id)).scalar()
            if mine is not None:
                return int(mine)
            used = set(conn.execute(sa.select(_VRID.vr_id).where(
                _VRID.network_id == net_id)).scalars())
            free = next((i for i in VR_IDS if i not in used), None)
            if free is None:
                raise errors.NoVRIDAvailable(router_id=router_id)
            try:
                with conn.begin_nested():
                    conn.execute(sa.insert(t.ha_router_vrid_allocations).values(
                        network_id=net_id, vr_id=free, router_id=router_id))
            except sa_exc.IntegrityError:
                return None  # taken meanwhile: look again
            return free
        for _ in range(10):
            got = self.core.write(claim)
            if got is not None:
                return got
        raise errors.NoVRIDAvailable(router_id=router_id)

    def sync_ports(self, router_id: str) -> None:
        """An HA port for each agent hosting the HA router that has none."""
        with self.db.reader() as conn:
            router = conn.execute(sa.select(t.routers.c.ha).where(
                t.routers.c.id == router_id)).first()
            if router is None or not router.ha:
                return
            bound = set(conn.execute(sa.select(t.routerl3agentbindings.c.l3_agent_id).where(
                t.routerl3agentbindings.c.router_id == router_id)).scalars())
            have = set(self.states(conn, router_id))
        for agent_id in sorted(bound - have):
            try:
                self.add_port(router_id, agent_id)
            except sa_exc.IntegrityError:
                pass  # made meanwhile for that agent (or the router or agent went)

    def delete_ports(self, router_id: str, agent_id: str | None = None) -> None:
        """The router's HA ports (only the one of ``agent_id`` if given)."""
        def unlink(conn: Connection) -> list[str]:
            stmt = sa.select(_BIND.port_id).where(_BIND.router_id == router_id)
            if agent_id is not None:
                stmt = stmt.where(_BIND.l3_agent_id == agent_id)
            ids = list(conn.execute(stmt).scalars())
            if agent_id is None:
                ids += [p.id for p in c.router_ports(conn, router_id, HA_INTERFACE)
                        if p.id not in ids]
            if ids:
                conn.execute(sa.delete(t.routerports).where(t.routerports.c.port_id.in_(ids)))
            if agent_id is None:  # no longer HA (or going): its VRRP id is free again
                conn.execute(sa.delete(t.ha_router_vrid_allocations).where(
                    _VRID.router_id == router_id))
            return ids
        for port_id in self.core.write(unlink):
            try:
                self.core.delete(c.internal(), "ports", port_id)
            except errors.PortNotFound:
                pass

    # -- agents' states --------------------------------------------------------------

    def states(self, conn: Connection, router_id: str) -> dict[str, str]:
        """{agent_id: ha_state} of an HA router's bound agents."""
        return dict(conn.execute(sa.select(_BIND.l3_agent_id, _BIND.state).where(
            _BIND.router_id == router_id, _BIND.l3_agent_id.is_not(None))).tuples().all())

    def set_states(self, agent_id: str, states: dict[str, str]) -> None:
        """Store what an agent reports: {router_id: active|standby|unknown}."""
        def op(conn: Connection) -> None:
            for router_id, state in sorted(states.items()):
                if state not in STATES:
                    continue
                conn.execute(sa.update(t.ha_router_agent_port_bindings).where(
                    _BIND.router_id == router_id, _BIND.l3_agent_id == agent_id)
                    .values(state=state))
        self.core.write(op)
