"""A load balancer's UDP and SCTP listeners as an nftables ruleset (pure).

haproxy carries neither, and this kernel has no IPVS (Octavia's amphora
balances them with LVS), so they are realised by the kernel itself in the
load balancer's namespace: one table, ``inet neutrino_lb``, where a
datagram for a listener's VIP and port opening a new flow is DNATed to a
member chosen by the pool's algorithm, and conntrack keeps the rest of the
flow or SCTP association (its replies too) on that member. The flow's source is masqueraded to
the load balancer's own address, as Octavia's amphora does for UDP, so
members answer through the load balancer whatever their route to the
client.

How a member is chosen (``weight`` members' share of each):

- ``ROUND_ROBIN``: ``numgen inc`` over the weights, flow after flow;
- ``LEAST_CONNECTIONS``: approximated by the same weighted round robin
  (nftables cannot count a member's flows when choosing): with flows of
  similar lifetimes each member holds its share of them;
- ``SOURCE_IP`` (and ``SOURCE_IP`` session persistence on any pool):
  ``jhash`` of the client's address, so a client keeps its member while the
  members in rotation stay the same (``persistence_timeout`` and
  ``persistence_granularity`` are not applied: the hash has no expiry);
- ``SOURCE_IP_PORT``: ``jhash`` of the client's address and port.

(``UDP`` below stands for either protocol: the rules name the listener's.)

In rotation: members up, of weight above 0, not failing their health
monitor (``down``), of the VIP's address family; backup members only when
no other member is. A listener with no member in rotation DNATs nothing
(the load balancer's namespace answers ICMP port unreachable).

Per listener, named counters give the statistics: ``in_<id>`` (datagrams
from clients, forwarded), ``out_<id>`` (replies from members) and
``new_<id>`` (flows opened). Listeners, pools and members that are down or
being deleted are left out, as in haproxy's configuration.
"""
from __future__ import annotations

import ipaddress

from neutrino.resources.lb_graph import Listener, LoadBalancer, Member, Pool
from neutrino.resources.lb_haproxy import by_nftables, live

TABLE = "neutrino_lb"
FAMILY = "inet"


def counter_names(listener_id: str) -> tuple[str, str, str]:
    """(datagrams in, replies out, new flows) counters of a listener."""
    key = listener_id.replace("-", "")
    return f"in_{key}", f"out_{key}", f"new_{key}"


def udp_listeners(lb: LoadBalancer) -> list[Listener]:
    """The listeners this ruleset realises (live, up, on a load balancer that is up)."""
    if not lb.admin_state_up:
        return []
    return [x for x in live(lb.listeners) if x.admin_state_up and by_nftables(x.protocol)]


def _version(address: str) -> int:
    return ipaddress.ip_address(address).version


def _ip(version: int) -> str:
    return "ip" if version == 4 else "ip6"


def _vips(lb: LoadBalancer) -> list[str]:
    extra = [v.get("ip_address") for v in lb.additional_vips]
    return list(dict.fromkeys(a for a in [lb.vip.address, *extra] if a))


def in_rotation(pool: Pool, version: int, down: frozenset[str]) -> list[Member]:
    """The members new flows of ``pool`` go to (over one address family)."""
    usable = [m for m in live(pool.members)
              if m.admin_state_up and m.weight > 0 and m.id not in down
              and _version(m.address) == version]
    primary = [m for m in usable if not m.backup]
    return primary or [m for m in usable if m.backup]


def _target(member: Member) -> str:
    address = member.address
    return f"{address} . {member.protocol_port}"


def selector(pool: Pool, proto: str, version: int) -> str:
    """The expression whose value, modulo the weights' sum, picks the member."""
    persistent = (pool.session_persistence or {}).get("type") == "SOURCE_IP"
    ip = _ip(version)
    seed = f"seed 0x{pool.id.replace('-', '')[:8]}"  # stable across reloads
    if pool.lb_algorithm == "SOURCE_IP_PORT":
        return f"jhash {ip} saddr . {proto} sport mod {{total}} {seed}"
    if pool.lb_algorithm == "SOURCE_IP" or persistent:
        return f"jhash {ip} saddr mod {{total}} {seed}"
    return "numgen inc mod {total}"


def dnat(pool: Pool, proto: str, version: int, down: frozenset[str]) -> str | None:
    """The DNAT statement sending a new flow to a member; None without one."""
    members = in_rotation(pool, version, down)
    if not members:
        return None
    ip = _ip(version)
    if len(members) == 1:
        m = members[0]
        address = f"[{m.address}]" if version == 6 else m.address
        return f"dnat {ip} to {address}:{m.protocol_port}"
    entries, start = [], 0
    for m in members:
        end = start + m.weight - 1
        key = str(start) if end == start else f"{start}-{end}"
        entries.append(f"{key} : {_target(m)}")
        start = end + 1
    expr = selector(pool, proto, version).format(total=start)
    return f"dnat {ip} to {expr} map {{ {', '.join(entries)} }}"


def render(lb: LoadBalancer, down: frozenset[str] = frozenset()) -> str:
    """The whole table for ``lb``'s UDP listeners; "" when it has none (the
    table must then not exist). ``down``: members failing their monitor."""
    listeners = udp_listeners(lb)
    if not listeners:
        return ""
    pools = {p.id: p for p in live(lb.pools) if p.admin_state_up}
    counters: list[str] = []
    admit: list[str] = []
    nat: list[str] = []
    forward: list[str] = []
    vips = _vips(lb)
    for listener in listeners:
        proto = listener.protocol.lower()
        c_in, c_out, c_new = counter_names(listener.id)
        counters += [f"    counter {c_in} {{\n    }}", f"    counter {c_out} {{\n    }}",
                     f"    counter {c_new} {{\n    }}"]
        pool = pools.get(listener.default_pool_id or "")
        for version in sorted({_version(a) for a in vips}):
            ip = _ip(version)
            daddr = ", ".join(a for a in vips if _version(a) == version)
            match = f"{ip} daddr {{ {daddr} }} {proto} dport {listener.protocol_port}"
            cidrs = [c for c in listener.allowed_cidrs or ()
                     if ipaddress.ip_network(c, strict=False).version == version]
            if listener.allowed_cidrs:
                allowed = f" {ip} saddr != {{ {', '.join(cidrs)} }}" if cidrs else ""
                admit.append(f"        {match}{allowed} drop")
            statement = dnat(pool, proto, version, down) if pool else None
            nat.append(f"        {match} counter name {c_new}"
                       + (f" {statement}" if statement else ""))
            original = (f"meta l4proto {proto} ct original {ip} daddr {{ {daddr} }} "
                        f"ct original proto-dst {listener.protocol_port}")
            forward += [f"        {original} ct direction original counter name {c_in}",
                        f"        {original} ct direction reply counter name {c_out}"]
    masquerade = [f"        ct status dnat ct original {_ip(v)} daddr "
                  f"{{ {', '.join(a for a in vips if _version(a) == v)} }} masquerade"
                  for v in sorted({_version(a) for a in vips})]
    out = [f"table {FAMILY} {TABLE} {{", *counters,
           "    chain lb_admit {",
           "        type filter hook prerouting priority mangle; policy accept;", *admit,
           "    }",
           "    chain lb_dispatch {",
           "        type nat hook prerouting priority dstnat; policy accept;", *nat,
           "    }",
           "    chain lb_count {",
           "        type filter hook forward priority filter; policy accept;", *forward,
           "    }",
           "    chain lb_snat {",
           "        type nat hook postrouting priority srcnat; policy accept;", *masquerade,
           "    }",
           "}"]
    return "\n".join(out) + "\n"


def with_counters(ruleset: str, counters: dict[str, tuple[int, int]]) -> str:
    """``ruleset`` with its named counters starting from ``counters`` (name ->
    (packets, bytes)): replacing the table then keeps the listeners' counts."""
    for name, (packets, size) in counters.items():
        ruleset = ruleset.replace(f"    counter {name} {{\n    }}",
                                  f"    counter {name} {{\n        packets {packets} "
                                  f"bytes {size}\n    }}")
    return ruleset


def replace_script(ruleset: str) -> str:
    """What ``nft -f`` takes to put ``ruleset`` in place of the table in one
    transaction (creating the table first so that deleting it never fails)."""
    head = f"table {FAMILY} {TABLE}\ndelete table {FAMILY} {TABLE}\n"
    return head + ruleset
