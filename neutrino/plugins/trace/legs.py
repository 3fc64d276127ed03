"""``trace --live``'s questions: which host's agent is asked about which hops.

The model's path (``model.py``) crosses hosts. The source port's OVS agent
answers for the packet leaving the port through br-int, the destination
port's for it arriving from the network or the router. Which L3 agent
answers for the router, and in which namespace, depends on the router
(``placement.py``):

- a legacy router routes on the host of its L3 agent, in ``qrouter-``;
- an HA router on the host whose agent reported it active; with none
  active no host is asked and the leg says why (a standby's namespace
  does not route);
- a distributed router routes between its subnets on the source port's
  host (that host's copy of ``qrouter-``); what leaves without a floating
  IP goes from there to the router's SNAT port, in the ``snat-``
  namespace of the ``dvr_snat`` host its SNAT part is bound to; a
  floating IP is answered on its instance's host: ``qrouter-`` holds the
  1:1 NAT (on its ``rfp-`` device), ``fip-`` the floating IP gateway
  (``fg-``) on the external network.

Each leg names the model's hops (by their index) it answers; a leg
answering none (the distributed router's copy sending to the SNAT node,
the ``fip-`` namespace letting a floating IP in) still counts when the
host drops the packet there.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neutrino.plugins.trace import model
from neutrino.plugins.trace.placement import Placement
from neutrino.rpc import topics

HOST_ID = "binding:host_id"
OVS, L3 = topics.AUDIT_OVS, topics.AUDIT_L3
ROUTER_HOPS = ("route", "snat", "floating_ip", "gateway", "external_gateway")
DESTINATION_HOPS = ("destination_port", "security_group_ingress")
BROADCAST = "ff:ff:ff:ff:ff:ff"
SNAT_PORT_OWNER = "network:router_centralized_snat"
FIP_GATEWAY_OWNER = "network:floatingip_agent_gateway"
# the router namespace an L3 agent is asked about (``packet["namespace"]``)
QROUTER, SNAT, FIP = "qrouter", "snat", "fip"


@dataclass
class Leg:
    """One question to one host's agent, and which of the model's hops it answers."""
    name: str  # "source", "router", "snat", "fip", "destination" ("-in": a hairpin's way back)
    topic: str
    host: str
    packet: dict[str, Any]
    hops: tuple[int, ...] = ()  # indexes into the model's hops
    unplaced: str = ""  # why no host can be asked (``host`` is then empty)
    answer: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Path:
    """What the legs of one traced packet are made from."""
    facts: model.Facts
    hops: list[dict[str, Any]]
    ports: dict[str, dict[str, Any]]
    proto: dict[str, Any]
    destination_ip: str
    placements: dict[str, Placement]

    def where(self, router_id: str) -> Placement:
        return self.placements.get(router_id) or Placement(router_id)

    def indexes(self, kinds: tuple[str, ...], stop: int | None = None,
                having: str | None = None) -> tuple[int, ...]:
        """The hops of ``kinds`` before ``stop`` (that have the key ``having``)."""
        end = len(self.hops) if stop is None else stop
        return tuple(i for i in range(end) if self.hops[i]["kind"] in kinds
                     and (having is None or self.hops[i].get(having) is not None))

    def floating_ip(self, hop: dict[str, Any]) -> dict[str, Any]:
        return next((f for f in self.facts.floatingips if f["id"] == hop.get("floatingip_id")),
                    {})

    def port(self, owner: str, **match: Any) -> dict[str, Any] | None:
        return next((p for p in self.facts.ports if p.get("device_owner") == owner
                     and all(p.get(k) == v for k, v in match.items())), None)

    def router_leg(self, name: str, host: str, unplaced: str, hops: tuple[int, ...],
                   **packet: Any) -> Leg:
        return Leg(name, L3, host, {**packet, **self.proto}, hops, unplaced)


def _router_port(facts: model.Facts, router_id: str, network_id: str,
                 owners: tuple[str, ...]) -> dict[str, Any] | None:
    for port in facts.ports:
        if (port.get("device_id") == router_id and port.get("device_owner") in owners
                and port["network_id"] == network_id):
            return port
    return None


def _first(hops: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    return next((h for h in hops if h["kind"] == kind), None)


def _central(path: _Path, router_id: str, entry: dict[str, Any], inbound: bool, src: str,
             hops: tuple[int, ...], name: str = "router") -> Leg:
    """A legacy or HA router: one leg, in ``qrouter-`` on the host that routes."""
    host, why = path.where(router_id).central()
    return path.router_leg(name, host, why, hops, router_id=router_id, namespace=QROUTER,
                           in_port_id=entry["id"], from_gateway=inbound, nw_src=src,
                           nw_dst=path.destination_ip)


def _inbound(path: _Path, index: int, src: str, suffix: str = "") -> list[Leg]:
    """A floating IP's way in from the external network (hop ``index``)."""
    hop = path.hops[index]
    router_id = str(hop.get("router_id") or "")
    place = path.where(router_id)
    gateway = path.port(model.GATEWAY_OWNER, device_id=router_id)
    if not place.distributed:
        if gateway is None:
            return []
        return [_central(path, router_id, gateway, True, src, (index,), "router" + suffix)]
    fip = path.floating_ip(hop)
    owner = path.ports.get(fip.get("port_id") or "") or {}
    host = str(owner.get(HOST_ID) or "")
    network_id = str(fip.get("floating_network_id") or "")
    agent_gateway = path.port(FIP_GATEWAY_OWNER, network_id=network_id, **{HOST_ID: host})
    why = "" if host else f"the port of floating IP {fip.get('id')} is bound to no host"
    fip_why = why or ("" if agent_gateway is not None else
                      f"host {host} has no floating IP agent gateway port on network "
                      f"{network_id}")
    return [path.router_leg("fip" + suffix, host, fip_why, (), router_id=router_id,
                            namespace=FIP, external_network_id=network_id,
                            in_port_id=(agent_gateway or {}).get("id"), from_gateway=True,
                            nw_src=src, nw_dst=path.destination_ip),
            path.router_leg("router" + suffix, host, why, (index,), router_id=router_id,
                            namespace=QROUTER, from_fip=True, nw_src=src,
                            nw_dst=path.destination_ip)]


def _distributed(path: _Path, router_id: str, interface: dict[str, Any],
                 sender: dict[str, Any], src: str) -> list[Leg]:
    """A distributed router's legs for a packet an instance sends through it."""
    host = str(sender.get(HOST_ID) or "")
    why = "" if host else "the source port is bound to no host"
    back = next((i for i, h in enumerate(path.hops) if h["kind"] == "floating_ip"
                 and h.get("translated_destination") is not None), len(path.hops))
    out = path.indexes(("floating_ip",), back, "translated_source")
    found = [path.router_leg("router", host, why, path.indexes(("route",), back) + out,
                             router_id=router_id, namespace=QROUTER,
                             in_port_id=interface["id"], from_gateway=False, nw_src=src,
                             nw_dst=path.destination_ip)]
    leaving = path.indexes(("snat", "gateway", "external_gateway"), back)
    if out:
        translated = str(path.hops[out[0]]["translated_source"])
        network_id = str(path.floating_ip(path.hops[out[0]]).get("floating_network_id") or "")
        found.append(path.router_leg(
            "fip", host, why, path.indexes(("external_gateway",), back),
            router_id=router_id, namespace=FIP, external_network_id=network_id,
            from_gateway=False, nw_src=translated, nw_dst=path.destination_ip))
    elif leaving:
        snat_host, snat_why = path.where(router_id).central()
        snat_port = path.port(SNAT_PORT_OWNER, device_id=router_id,
                              network_id=interface["network_id"])
        if snat_port is None and not snat_why:
            snat_why = (f"router {router_id} has no SNAT port on network "
                        f"{interface['network_id']}")
        found.append(path.router_leg("snat", snat_host, snat_why, leaving, router_id=router_id,
                                     namespace=SNAT, in_port_id=(snat_port or {}).get("id"),
                                     from_gateway=False, nw_src=src,
                                     nw_dst=path.destination_ip))
    if back < len(path.hops):  # the hairpin: back in through a floating IP
        seen_as = next((str(path.hops[i]["translated_source"]) for i in reversed(range(back))
                        if path.hops[i].get("translated_source")), src)
        found += _inbound(path, back, seen_as, "-in")
    return found


def _router_legs(path: _Path, sender: dict[str, Any] | None, src: str) -> list[Leg]:
    interface = _first(path.hops, "router_interface")
    if interface is not None:
        router_id = str(interface["router_id"])
        entry = path.ports.get(interface.get("port_id") or "")
        if entry is None:
            return []
        if path.where(router_id).distributed and sender is not None:
            return _distributed(path, router_id, entry, sender, src)
        return [_central(path, router_id, entry, False, src,
                         path.indexes(ROUTER_HOPS))]
    index = next((i for i, h in enumerate(path.hops) if h["kind"] == "floating_ip"), None)
    if sender is None and index is not None:
        legs = _inbound(path, index, src)
        if legs:  # its router leg (the last) answers every router hop
            legs[-1].hops = path.indexes(ROUTER_HOPS)
        return legs
    return []


def legs(facts: model.Facts, packet: model.Packet, traced: model.Trace,
         tunnel_ips: dict[str, str] | None = None,
         placements: dict[str, Placement] | None = None) -> list[Leg]:
    """The questions that put the model's path to the hosts it crosses
    (``tunnel_ips``: host -> its OVS agent's tunnel address, so a packet
    arriving from another host is traced from that host's tunnel;
    ``placements``: where the routers on the path are)."""
    ports, hops = {p["id"]: p for p in facts.ports}, traced.hops
    path = _Path(facts, hops, ports, {"protocol": packet.protocol,
                                      "destination_port": packet.destination_port},
                 packet.destination_ip, placements or {})
    source_hop = _first(hops, "source") or {}
    sender = ports.get(source_hop.get("port_id") or "")
    src = str(source_hop.get("source_ip") or packet.source_ip or "")
    destination = _first(hops, "destination_port")
    target = ports.get(destination["port_id"]) if destination else None
    interface = _first(hops, "router_interface")
    leaving: list[Leg] = []
    if sender is not None:
        next_mac = (target["mac_address"] if target is not None and interface is None
                    else ports[interface["port_id"]]["mac_address"] if interface is not None
                    and interface["port_id"] in ports else BROADCAST)
        leaving.append(Leg("source", OVS, sender.get(HOST_ID) or "", {
            "direction": "egress", "port_id": sender["id"], "network_id": sender["network_id"],
            "dl_src": sender["mac_address"], "dl_dst": next_mac, "nw_src": src,
            "nw_dst": packet.destination_ip, **path.proto}))
    routed = _router_legs(path, sender, src)
    router_id = (interface or {}).get("router_id") or next(
        (leg.packet["router_id"] for leg in routed), None)
    arriving: list[Leg] = []
    if target is not None and destination is not None:
        # through a floating IP (from outside, or back in from the router's
        # gateway: the hairpin), its router delivers from the translated source
        fip = next((h for h in hops if h.get("translated_destination")), {})
        address = str(fip.get("translated_destination") or packet.destination_ip)
        delivering = fip.get("router_id") or router_id or ""
        if _first(hops, "external_gateway"):
            src = next((str(h["translated_source"]) for h in reversed(hops)
                        if h.get("translated_source")), src)
        seen_from = sender if interface is None and sender is not None else _router_port(
            facts, delivering, target["network_id"], model.ROUTER_INTERFACE_OWNERS)
        if seen_from is not None:
            question: dict[str, Any] = {
                "direction": "ingress", "port_id": target["id"],
                "network_id": target["network_id"], "from_port_id": seen_from["id"],
                "dl_src": seen_from["mac_address"], "dl_dst": target["mac_address"],
                "nw_src": src, "nw_dst": address, **path.proto}
            sent_by = seen_from.get(HOST_ID)
            if sent_by and sent_by != target.get(HOST_ID) and sent_by in (tunnel_ips or {}):
                question["from_tunnel_ip"] = (tunnel_ips or {})[sent_by]
            arriving.append(Leg("destination", OVS, target.get(HOST_ID) or "", question,
                                path.indexes(DESTINATION_HOPS)))
    claimed = {i for leg in routed + arriving for i in leg.hops}
    for leg in leaving:  # the source's switch answers the rest of the path's hops
        leg.hops = tuple(i for i, h in enumerate(hops) if i not in claimed
                         and h["kind"] not in ROUTER_HOPS)
    return leaving + routed + arriving
