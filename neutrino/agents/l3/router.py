"""Make one host's routers match their desired state, and say what became of the FIPs.

``apply`` is idempotent and converges whatever it finds (a fresh host, an
earlier run, a crash halfway): the namespace and forwarding, the devices
(plugged through the InterfaceDriver; qr-/qg- devices no longer wanted are
unplugged), addresses and next-hop routes (missing added, stale removed),
then the NAT table replaced at once, the conntrack helpers' table
(``cthelpers``), the NDP proxy (the gateway's proxied neighbours and their
filter, ``ndp``), with the ``fwaas_v2`` extension the firewall groups on
its interfaces (their own table, ``fwaas``; applied first, right after the
namespace, so no new interface forwards unfiltered), with the QoS
extensions the bandwidth limits of floating
IPs and gateway IPs on the gateway device (``qos``; rebuilt only when they
change), then the router's metadata proxy
(when metadata is on) and its radvd (when an internal port is on an IPv6
subnet, see ``ra``; the gateway device learns an IPv6 default route from
the external network's advertisements when no external subnet gives an
IPv6 gateway, as upstream's). New IPv4 addresses are announced with a gratuitous
ARP, as upstream does. ``remove`` takes everything away.

Floating IP statuses, as upstream's agent reports them: ACTIVE once the
floating IP works, ERROR when setting it up failed, DOWN when it left the
router; only changes are reported (against what the server last showed
and what this agent reported).
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any

import netaddr

from neutrino.agents.interface import Attachment, InterfaceDriver
from neutrino.agents.l3 import cthelpers, dvr, fwaas, keepalived, model, nat, ndp, qos, ra
from neutrino.agents.l3.linux import LinuxHost
from neutrino.agents.l3.metadata import RouterMetadata
from neutrino.agents.l3.radvd import Radvd

LOG = logging.getLogger(__name__)

ACTIVE, DOWN, ERROR = "ACTIVE", "DOWN", "ERROR"


@dataclasses.dataclass
class Result:
    statuses: dict[str, str]  # floating IP id -> new status, to report
    error: Exception | None = None
    # ``fwaas_v2``: firewall group id -> status, to report
    firewall_statuses: dict[str, str] = dataclasses.field(default_factory=dict)


class RouterManager:
    def __init__(self, driver: InterfaceDriver, host: LinuxHost | None = None,
                 metadata: RouterMetadata | None = None,
                 ha_confs_path: str = "./ha_confs",
                 ha_settings: keepalived.Settings | None = None,
                 ra_confs_path: str = "./ra", ra_settings: ra.Settings | None = None,
                 ipv6_gateway: str = "", qos_extensions: frozenset[str] = frozenset(),
                 firewall: bool = False, agent_mode: str = "legacy",
                 host_name: str = "") -> None:
        """``agent_mode``, ``host_name``: the agent's (``dvr``: which share of a
        distributed router this host builds)."""
        self.driver = driver
        self.agent_mode = agent_mode
        self.host_name = host_name
        self.distributed: dict[str, dvr.DvrRouter] = {}  # router -> its share here
        self.host = host or LinuxHost()
        self.metadata = metadata
        self.ha_confs_path = ha_confs_path
        self.ha_settings = ha_settings or keepalived.Settings()
        self.ra_confs_path = ra_confs_path
        self.ra_settings = ra_settings or ra.Settings()
        self.ipv6_gateway = ipv6_gateway
        self.applied: dict[str, model.DesiredRouter] = {}
        self.qos_extensions = qos_extensions
        self.firewall = firewall  # the ``fwaas_v2`` extension applies groups
        self._shaped: dict[str, qos.Shaping | None] = {}  # router -> limits in place
        self._reported: dict[str, dict[str, str]] = {}  # router -> fip -> status

    # -- apply ---------------------------------------------------------------------

    def attach_devices(self, routers: list[dict[str, Any]]) -> None:
        """Give the devices of ``routers``, about to be applied, to the
        driver's ``attach_all`` at once (each router's ``apply`` plugs them
        after). Nothing is in a router's namespace yet, so its firewall
        still comes first. A failure here is only logged: ``apply`` plugs
        whatever is still missing, one device at a time."""
        try:
            self.driver.attach_all([
                Attachment(d.name, d.port_id, d.mac_address) for router in routers
                if not (router.get("distributed") and self.agent_mode in (dvr.DVR,
                                                                          dvr.DVR_SNAT))
                for d in model.desired_router(router, self.ipv6_gateway).devices])
        except Exception:  # noqa: BLE001 - each router plugs its own devices then
            LOG.exception("attaching the devices of %d routers at once failed", len(routers))

    def apply(self, router: dict[str, Any],
              policies: dict[str, dict[str, Any]] | None = None) -> Result:
        """``policies``: the QoS policies the router names, by id."""
        if router.get("distributed") and self.agent_mode in (dvr.DVR, dvr.DVR_SNAT):
            return self._apply_distributed(router)
        desired = model.desired_router(router, self.ipv6_gateway)
        firewalls = fwaas.port_firewalls(router) if self.firewall else ()
        error: Exception | None = None
        filtered = False
        try:
            self.host.ensure_namespace(desired.namespace)
            if self.firewall:
                self.host.nft(desired.namespace, fwaas.replace_script(firewalls))
            filtered = True
            self._devices(desired)
            self.host.sysctl(desired.namespace, self._sysctls(desired))
            self._addresses_and_routes(desired)
            self._tables(desired)
            self._rate_limits(desired, policies or {})
            self._proxied_neighbours(desired)
            if self.metadata is not None:
                self.metadata.ensure(desired.router_id, desired.namespace)
            self._vrrp(desired)
            self._advertise(desired)
        except Exception as exc:  # noqa: BLE001 - the router is retried; FIPs say ERROR
            LOG.exception("router %s: applying failed", desired.router_id)
            error = exc
        previous = self.applied.get(desired.router_id)
        self.applied[desired.router_id] = desired
        if previous is not None and error is None:
            gone = ({f.floating_ip_address for f in previous.floating_ips}
                    - {f.floating_ip_address for f in desired.floating_ips})
            for address in sorted(gone):
                self.host.forget_connections(desired.namespace, address)
        return Result(self._statuses(desired, error is None), error,
                      fwaas.statuses(firewalls, filtered))

    def _apply_distributed(self, router: dict[str, Any]) -> Result:
        """This host's share of a distributed router (``dvr``): its qrouter-
        namespace, its way to the fip- namespace, its snat- namespace on the
        SNAT host."""
        share = dvr.desired(router, self.host_name, self.agent_mode, self.ipv6_gateway)
        desired = share.local
        error: Exception | None = None
        try:
            self._namespace(desired)
            self._devices(desired)
            self._addresses(desired)
            self._fip_link(desired, share.distributed.fip)
            self._neighbours(desired, share.distributed)
            self._policy_routes(desired, share.distributed)
            self._routes(desired)
            self._nat(desired)
            if self.metadata is not None:
                self.metadata.ensure(desired.router_id, desired.namespace)
            self._advertise(desired)
            self._snat(desired.router_id, share.snat)
        except Exception as exc:  # noqa: BLE001 - the router is retried; FIPs say ERROR
            LOG.exception("distributed router %s: applying failed", desired.router_id)
            error = exc
        self.applied[desired.router_id] = desired
        self.distributed[desired.router_id] = share
        try:
            self._collect_fip_namespaces()
        except Exception as exc:  # noqa: BLE001 - tried again next time
            LOG.exception("removing unused fip- namespaces failed")
            error = error or exc
        return Result(self._statuses(desired, error is None), error)

    def _neighbours(self, desired: model.DesiredRouter, share: dvr.Distributed) -> None:
        ns = desired.namespace
        wanted = {(n.device, n.ip_address, n.mac_address) for n in share.neighbours}
        present = self.host.permanent_neighbours(ns)
        for device, address, _ in sorted(present - wanted):
            self.host.delete_neighbour(ns, device, address)
        for device, address, mac in sorted(wanted - present):
            self.host.replace_neighbour(ns, device, address, mac)

    def _policy_routes(self, desired: model.DesiredRouter, share: dvr.Distributed) -> None:
        """The rules sending subnets to their SNAT port and fixed addresses to
        the fip- namespace, and the tables they look up."""
        ns = desired.namespace
        wanted = {(r.source, r.table, r.priority) for r in share.rules}
        present = self.host.rules(ns)
        for source, table, priority in sorted(present - wanted):
            self.host.delete_rule(ns, source, table, priority)
        tables = {r.table for r in share.table_routes}
        for table in sorted({t for _, t, _ in present} - tables):
            self.host.flush_table(ns, table)
        for route in share.table_routes:
            self.host.replace_table_route(ns, route.table, route.nexthop, route.device)
        for source, table, priority in sorted(wanted - present):
            self.host.add_rule(ns, source, table, priority)

    def _fip_link(self, desired: model.DesiredRouter, link: dvr.FipLink | None) -> None:
        """The fip- namespace with its fg- gateway, and the router's rfp-/fpr-
        pair to it with a host route per floating IP; none without floating IPs here."""
        ns = desired.namespace
        rfp, _ = dvr.pair_names(desired.router_id)
        if link is None:
            if rfp in self.host.links(ns):
                self.host.delete_link(ns, rfp)  # its fpr- end goes with it
            return
        fip = link.fip
        self.host.ensure_namespace(fip.namespace)
        self.host.enable_forwarding(fip.namespace)
        gw = fip.gateway
        self.driver.plug(gw.network_id, gw.port_id, gw.name, gw.mac_address,
                         namespace=fip.namespace, mtu=gw.mtu)
        present = self.host.addresses(fip.namespace, gw.name)
        for cidr in sorted(present - set(gw.cidrs)):
            self.host.delete_address(fip.namespace, gw.name, cidr)
        added = sorted(set(gw.cidrs) - present)
        for cidr in added:
            self.host.add_address(fip.namespace, gw.name, cidr)
        self.host.set_proxy_arp(fip.namespace, gw.name)
        for route in fip.routes:
            self.host.replace_route(fip.namespace, route.destination, route.nexthop,
                                    route.device, route.onlink)
        if link.rfp not in self.host.links(ns):
            if link.fpr in self.host.links(fip.namespace):
                self.host.delete_link(fip.namespace, link.fpr)
            self.host.add_veth_pair(ns, link.rfp, fip.namespace, link.fpr)
        for device, namespace, address in ((link.rfp, ns, link.rfp_address),
                                           (link.fpr, fip.namespace, link.fpr_address)):
            if f"{address}/31" not in self.host.addresses(namespace, device):
                self.host.add_address(namespace, device, f"{address}/31")
        wanted = {(f"{a}/32", link.rfp_address) for a in link.floating_ips}
        have = self.host.host_routes(fip.namespace, link.fpr)
        for destination, nexthop in sorted(have - wanted):
            self.host.delete_route(fip.namespace, destination, nexthop)
        for destination, nexthop in sorted(wanted - have):
            self.host.replace_route(fip.namespace, destination, nexthop, link.fpr)
        if added:  # the external network's neighbours learn the new gateway
            self.host.announce(fip.namespace, gw.name,
                               [c.split("/")[0] for c in added if ":" not in c])

    def _collect_fip_namespaces(self) -> None:
        """fip- namespaces no distributed router here uses any more go."""
        used = {share.distributed.fip.fip.namespace for share in self.distributed.values()
                if share.distributed.fip is not None}
        prefix = model.namespace_name("", "fip-")
        suffix = prefix[len("fip-"):]
        for ns in self.host.namespaces():
            if ns.startswith("fip-") and ns.endswith(suffix) and ns not in used:
                self._remove_namespace(ns)

    def _remove_namespace(self, ns: str) -> None:
        for name in self.host.links(ns):
            if name.startswith(model.DEVICE_PREFIXES):
                self.driver.unplug(name, namespace=ns)
        self.host.delete_namespace(ns)

    def _snat(self, router_id: str, snat: model.DesiredRouter | None) -> None:
        """The snat- namespace: built on the SNAT host, gone elsewhere."""
        if snat is None:
            ns = dvr.snat_namespace_name(router_id)
            if ns in self.host.namespaces():
                self.host.nft(ns, nat.delete_script())
                self._remove_namespace(ns)
            return
        self._namespace(snat)
        self._devices(snat)
        self._addresses(snat)
        self._gateway_ipv6(snat)
        self._routes(snat)
        self.host.nft(snat.namespace, nat.replace_script(snat, None))

    def _namespace(self, desired: model.DesiredRouter) -> None:
        self.host.ensure_namespace(desired.namespace)
        self.host.enable_forwarding(desired.namespace)

    def _devices(self, desired: model.DesiredRouter) -> None:
        """Devices found in the namespace that the driver says are still
        attached are kept as they are (a restart adopts them without a
        question per device); the others are plugged."""
        ns = desired.namespace
        mtus = self.host.mtus(ns)
        kept = self.driver.attached([d.name for d in desired.devices if d.name in mtus])
        for dev in desired.devices:
            if dev.name not in kept:
                self.driver.plug(dev.network_id, dev.port_id, dev.name, dev.mac_address,
                                 namespace=ns, mtu=dev.mtu)
        for name in mtus:
            if name.startswith(model.DEVICE_PREFIXES) and name not in desired.device_names:
                self.driver.unplug(name, namespace=ns)
        for dev in desired.devices:  # a kept device follows its network's MTU
            if dev.mtu and dev.name in mtus and mtus[dev.name] != dev.mtu:
                self.host.set_mtu(ns, dev.name, dev.mtu)

    def keepalived(self, router_id: str) -> keepalived.Keepalived:
        return keepalived.Keepalived(self.ha_confs_path, router_id)

    def _vrrp(self, desired: model.DesiredRouter) -> None:
        """An HA router's keepalived runs with its current addresses and routes."""
        if desired.ha is not None:
            self.keepalived(desired.router_id).ensure(desired, self.ha_settings)
        elif self.keepalived(desired.router_id).dir.exists():
            self.keepalived(desired.router_id).stop()  # no longer HA here

    def radvd(self, router_id: str) -> Radvd:
        return Radvd(self.ra_confs_path, router_id)

    def _advertise(self, desired: model.DesiredRouter) -> None:
        """radvd runs with the router's current IPv6 internal ports, or not at all."""
        if ra.needed(desired):
            self.radvd(desired.router_id).ensure(desired.namespace,
                                                 ra.config(desired, self.ra_settings),
                                                 self.ra_settings)
        elif self.radvd(desired.router_id).dir.exists():
            self.radvd(desired.router_id).stop()

    def radvd_stopped(self) -> list[str]:
        """Routers that should advertise but whose radvd is not running (it died)."""
        return sorted(rid for rid, desired in self.applied.items()
                      if ra.needed(desired) and self.radvd(rid).pid() is None)

    def _gateway_ipv6(self, desired: model.DesiredRouter) -> None:
        if desired.gateway_device and desired.ha is None:
            self.host.set_accept_ra(desired.namespace, desired.gateway_device,
                                    desired.gateway_accept_ra)

    def announce_vips(self, router_id: str) -> None:
        """A new master's gratuitous ARPs for its IPv4 addresses, once more
        after keepalived's own: neighbours and switches learn where they went."""
        desired = self.applied.get(router_id)
        if desired is None or desired.ha is None:
            return
        for dev in desired.devices:
            if dev.name == desired.ha.device:
                continue
            v4 = [c.split("/")[0] for c in sorted(desired.addresses(dev.name))
                  if netaddr.IPNetwork(c).version == 4]
            if v4:
                self.host.announce(desired.namespace, dev.name, v4)

    def restore_vrrp_state(self, router_id: str) -> None:
        """What keepalived put in place at its last transition, put back
        (``neutrino audit --repair``: keepalived does not notice an address
        or a route added or removed behind its back): on a master the VIPs
        and the virtual routes, on a backup no VIP."""
        desired = self.applied.get(router_id)
        state = self.keepalived(router_id).state()
        if desired is None or desired.ha is None or state is None:
            return
        ns = desired.namespace
        for dev in desired.devices:
            if dev.name == desired.ha.device:
                continue
            wanted, present = desired.addresses(dev.name), self.host.addresses(ns, dev.name)
            if state != "active":
                for cidr in sorted(wanted & present):
                    self.host.delete_address(ns, dev.name, cidr)
                continue
            added = sorted(wanted - present, key=netaddr.IPNetwork)
            for cidr in added:
                self.host.add_address(ns, dev.name, cidr)
            new_v4 = [c.split("/")[0] for c in added if netaddr.IPNetwork(c).version == 4]
            if new_v4:
                self.host.announce(ns, dev.name, new_v4)
        if state != "active":
            return
        for version in (4, 6):
            have = {(r["dst"], r["gateway"]) for r in self.host.gateway_routes(ns, version)}
            # default routes first: extra routes' next hops may need them
            for route in sorted((r for r in desired.routes if r.version == version),
                                key=lambda r: r.destination != "default"):
                if (route.destination, route.nexthop) not in have:
                    self.host.replace_route(ns, route.destination, route.nexthop,
                                            route.device, route.onlink)

    def _addresses(self, desired: model.DesiredRouter) -> None:
        ns = desired.namespace
        if desired.ha is not None:  # keepalived owns the rest (and the VIP on ha-)
            # a backup's qr-/qg- (same MACs as the master's) must stay silent:
            # no IPv6 link-local traffic that would teach switches the wrong host
            self.host.disable_ipv6(ns, sorted(d.name for d in desired.devices
                                              if d.name != desired.ha.device))
            if desired.ha.cidr not in self.host.addresses(ns, desired.ha.device):
                self.host.add_address(ns, desired.ha.device, desired.ha.cidr)
            return
        for dev in desired.devices:
            wanted = desired.addresses(dev.name)
            present = self.host.addresses(ns, dev.name)
            for cidr in sorted(present - wanted):
                self.host.delete_address(ns, dev.name, cidr)
            added = sorted(wanted - present, key=netaddr.IPNetwork)
            for cidr in added:
                self.host.add_address(ns, dev.name, cidr)
            new_v4 = [c.split("/")[0] for c in added if netaddr.IPNetwork(c).version == 4]
            if new_v4:  # neighbours that failed to resolve them learn them now
                self.host.announce(ns, dev.name, new_v4)

    def _sysctls(self, desired: model.DesiredRouter) -> dict[str, str]:
        """The namespace's forwarding and its gateway's IPv6 settings, set by
        one process (after the devices exist)."""
        settings = {"net.ipv4.ip_forward": "1", "net.ipv6.conf.all.forwarding": "1"}
        gw = desired.gateway_device
        if gw:
            if desired.ha is None and LinuxHost.has_ipv6():
                settings[f"net.ipv6.conf.{gw}.accept_ra"] = str(desired.gateway_accept_ra)
            settings[f"net.ipv6.conf.{gw}.proxy_ndp"] = str(int(desired.ndp_proxy is not None))
        return settings

    def _addresses_and_routes(self, desired: model.DesiredRouter) -> None:
        """A non-HA router's addresses and next-hop routes: read once, stale
        routes deleted, then every change in one ``ip -batch`` (addresses
        before the routes through them) and one process for the gratuitous
        ARPs of the new IPv4 addresses."""
        if desired.ha is not None:
            self._addresses(desired)
            return
        ns = desired.namespace
        present = self.host.all_addresses(ns)
        commands: list[str] = []
        new_v4: dict[str, list[str]] = {}
        for dev in desired.devices:
            wanted, have = desired.addresses(dev.name), present.get(dev.name, set())
            commands += [LinuxHost.address_command("del", dev.name, cidr)
                         for cidr in sorted(have - wanted)]
            added = sorted(wanted - have, key=netaddr.IPNetwork)
            commands += [LinuxHost.address_command("add", dev.name, cidr) for cidr in added]
            new_v4[dev.name] = [c.split("/")[0] for c in added
                                if netaddr.IPNetwork(c).version == 4]
        for version in (4, 6):
            wanted_routes = [r for r in desired.routes if r.version == version]
            keys = {(r.destination, r.nexthop) for r in wanted_routes}
            routes = self.host.gateway_routes(ns, version)
            for route in routes:
                if (route["dst"], route["gateway"]) not in keys:
                    self.host.delete_route(ns, route["dst"], route["gateway"])
            have_routes = {(r["dst"], r["gateway"]) for r in routes}
            # default routes first: extra routes' next hops may need them
            for route in sorted(wanted_routes, key=lambda r: r.destination != "default"):
                if (route.destination, route.nexthop) not in have_routes:
                    commands.append(LinuxHost.route_command(route.destination, route.nexthop,
                                                            route.device, route.onlink))
        self.host.batch(ns, commands)
        # neighbours that failed to resolve them learn them now
        self.host.announce_all(ns, new_v4)

    def _tables(self, desired: model.DesiredRouter) -> None:
        """NAT, the NDP proxy's filter and the conntrack helpers' table in one
        nft transaction; the helpers in a second one when the router has
        some (a helper the kernel lacks then fails its table alone)."""
        script = nat.replace_script(desired, self.metadata) + ndp.replace_script(desired)
        helpers = cthelpers.replace_script(desired)
        if desired.conntrack_helpers:
            self.host.nft(desired.namespace, script)
            self.host.nft(desired.namespace, helpers)
        else:
            self.host.nft(desired.namespace, script + helpers)

    def _proxied_neighbours(self, desired: model.DesiredRouter) -> None:
        """The gateway answers solicitations for exactly the proxied addresses."""
        ns, gw, proxy = desired.namespace, desired.gateway_device, desired.ndp_proxy
        if gw is None:
            return
        wanted = set(proxy.addresses) if proxy is not None else set()
        present = self.host.proxy_neighbours(ns, gw)
        for address in sorted(present - wanted):
            self.host.delete_proxy_neighbour(ns, gw, address)
        for address in sorted(wanted - present):
            self.host.add_proxy_neighbour(ns, gw, address)

    def _routes(self, desired: model.DesiredRouter) -> None:
        ns = desired.namespace
        if desired.ha is not None:
            return  # keepalived's virtual_routes, on the master only
        for version in (4, 6):
            wanted = [r for r in desired.routes if r.version == version]
            keys = {(r.destination, r.nexthop) for r in wanted}
            present = self.host.gateway_routes(ns, version)
            for route in present:
                if (route["dst"], route["gateway"]) not in keys:
                    self.host.delete_route(ns, route["dst"], route["gateway"])
            have = {(r["dst"], r["gateway"]) for r in present}
            # default routes first: extra routes' next hops may need them
            for route in sorted(wanted, key=lambda r: r.destination != "default"):
                if (route.destination, route.nexthop) not in have:
                    self.host.replace_route(ns, route.destination, route.nexthop,
                                            route.device, route.onlink)

    def _nat(self, desired: model.DesiredRouter) -> None:
        self.host.nft(desired.namespace, nat.replace_script(desired, self.metadata))

    def _in_place(self, ns: str, shaping: qos.Shaping | None) -> bool:
        """Whether the gateway device still has the qdiscs of its limits (a
        re-plugged device comes back without them)."""
        if shaping is None or not shaping.limits:
            return True
        kinds = self.host.qdiscs(ns, shaping.device)
        return ((not shaping.of(qos.EGRESS) or "htb" in kinds)
                and (not shaping.of(qos.INGRESS) or "ingress" in kinds))

    def _rate_limits(self, desired: model.DesiredRouter,
                     policies: dict[str, dict[str, Any]]) -> None:
        """The gateway device's limits, rebuilt whole when they changed (or
        are unknown: a new agent adopts whatever it finds)."""
        if not self.qos_extensions:
            return
        wanted = qos.shaping(desired, policies, self.qos_extensions)
        rid, ns = desired.router_id, desired.namespace
        if rid in self._shaped and self._shaped[rid] == wanted and self._in_place(ns, wanted):
            return
        self._shaped.pop(rid, None)  # unknown until done
        keep_ifb = wanted.ifb if wanted is not None and wanted.of(qos.INGRESS) else None
        for name in self.host.links(ns):
            if name.startswith(qos.IFB_PREFIX) and name != keep_ifb:
                self.host.delete_link(ns, name)
        if wanted is not None:
            self.host.reset_tc(ns, wanted.device)
            if keep_ifb is not None:
                self.host.ensure_ifb(ns, keep_ifb)
                self.host.reset_tc(ns, keep_ifb)
            if wanted.limits:
                self.host.tc(ns, qos.tc_batch(wanted))
        self._shaped[rid] = wanted

    # -- statuses ------------------------------------------------------------------

    def _statuses(self, desired: model.DesiredRouter, ok: bool) -> dict[str, str]:
        reported = self._reported.setdefault(desired.router_id, {})
        now = {f.id: (ACTIVE if ok else ERROR) for f in desired.floating_ips}
        changes = {}
        for fip in desired.floating_ips:
            known = reported.get(fip.id, fip.status)
            if now[fip.id] != known:
                changes[fip.id] = now[fip.id]
        for fip_id in reported.keys() - now.keys():
            if reported[fip_id] != DOWN:
                changes[fip_id] = DOWN
        self._reported[desired.router_id] = {**now, **{k: DOWN for k in reported.keys()
                                                       - now.keys()}}
        return changes

    def forget_status(self, router_id: str, statuses: dict[str, str]) -> None:
        """A report that did not reach the server is sent again next time."""
        reported = self._reported.get(router_id, {})
        for fip_id in statuses:
            reported.pop(fip_id, None)

    # -- remove --------------------------------------------------------------------

    def remove(self, router_id: str) -> None:
        """Devices unplugged, table and namespace deleted; absent is fine."""
        ns = model.namespace_name(router_id)
        self.applied.pop(router_id, None)
        if self.distributed.pop(router_id, None) is not None or self.agent_mode == dvr.DVR_SNAT:
            self._snat(router_id, None)
            self._collect_fip_namespaces()
        self._reported.pop(router_id, None)
        self._shaped.pop(router_id, None)
        if self.metadata is not None:
            self.metadata.stop(router_id)
        self.keepalived(router_id).stop()
        self.radvd(router_id).stop()
        if ns not in self.host.namespaces():
            return
        for name in self.host.links(ns):
            if name.startswith(model.DEVICE_PREFIXES):
                self.driver.unplug(name, namespace=ns)
        self.host.nft(ns, nat.delete_script())
        if self.firewall:
            self.host.nft(ns, fwaas.delete_script())
        self.host.delete_namespace(ns)

    def stale_router_ids(self, keep: set[str]) -> list[str]:
        """Routers whose namespace (or metadata proxy) exists on the host but
        that this host no longer serves."""
        found = {ns[len(model.NS_PREFIX):] for ns in self.host.namespaces()
                 if ns.startswith(model.NS_PREFIX)}
        if self.metadata is not None:
            found.update(self.metadata.running())
        return sorted(found - keep)
