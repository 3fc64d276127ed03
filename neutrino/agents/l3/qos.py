"""The L3 agent's ``fip_qos`` and ``gateway_ip_qos`` extensions, pure: which
bandwidth limits a router's gateway device must apply, and the tc commands
that apply them.

As upstream's L3 agent extensions, the limits are per address on the
router's gateway (``qg-``) device: a floating IP's policy limits what its
instance sends out (``egress``: packets leaving the gateway with the
floating IP as source, after SNAT) and what reaches it (``ingress``:
packets arriving for the floating IP, before DNAT); a router's gateway
policy does the same for the gateway IP, i.e. the SNAT traffic of the
instances without a floating IP. Only ``bandwidth_limit`` rules apply
(``max_kbps``; ``max_burst_kbps``, by default 80% of the rate, as
upstream).

Upstream polices with tc's ``police`` action; kernels without it (this
one: no ``act_police``) can still shape, so each limit is an HTB class of
its own fed by a u32 filter on the (IPv4) address: on the gateway device's root
qdisc for egress, and for ingress on an IFB device (``qi-``, in the router's
namespace) to which the gateway device's ingress qdisc redirects the
address's packets. Traffic matching no filter passes unclassified, at full
speed.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping

from neutrino.agents.l3 import model

FIP_QOS = "fip_qos"
GATEWAY_IP_QOS = "gateway_ip_qos"
EXTENSIONS = (FIP_QOS, GATEWAY_IP_QOS)
EGRESS, INGRESS = "egress", "ingress"
IFB_PREFIX = "qi-"
DEFAULT_BURST_RATE = 0.8  # upstream's burst when a rule gives none, as a share of the rate


@dataclasses.dataclass(frozen=True)
class IpLimit:
    direction: str  # egress: the address as source; ingress: as destination
    address: str
    kbps: int
    burst_kb: int


@dataclasses.dataclass(frozen=True)
class Shaping:
    """The limits of one router's gateway device."""

    device: str
    limits: tuple[IpLimit, ...]

    @property
    def ifb(self) -> str:
        """The IFB device ingress traffic is shaped on (named after the gateway's)."""
        return IFB_PREFIX + self.device[len(model.GATEWAY_PREFIX):]

    def of(self, direction: str) -> list[IpLimit]:
        return [limit for limit in self.limits if limit.direction == direction]


def enabled(extensions: Iterable[str]) -> frozenset[str]:
    """The QoS extensions among the agent's ``[agent] extensions``."""
    return frozenset(e.strip() for e in extensions) & frozenset(EXTENSIONS)


def policy_ids(router: Mapping[str, Any], extensions: frozenset[str]) -> set[str]:
    """The policies a router of the sync data needs (its floating IPs', its gateway's)."""
    ids: set[str] = set()
    if FIP_QOS in extensions:
        ids.update(f["qos_policy_id"] for f in router.get("_floatingips", ())
                   if f.get("qos_policy_id"))
    if GATEWAY_IP_QOS in extensions:
        info = router.get("external_gateway_info") or {}
        if router.get("gw_port") and info.get("qos_policy_id"):
            ids.add(info["qos_policy_id"])
    return ids


def used_policies(desired: model.DesiredRouter, extensions: frozenset[str]) -> set[str]:
    ids: set[str] = set()
    if FIP_QOS in extensions:
        ids.update(f.qos_policy_id for f in desired.floating_ips if f.qos_policy_id)
    if GATEWAY_IP_QOS in extensions and desired.gateway_qos_policy_id:
        ids.add(desired.gateway_qos_policy_id)
    return ids


def rates(policy: Mapping[str, Any] | None) -> dict[str, tuple[int, int]]:
    """(kbps, burst in kbit) per direction of the policy's bandwidth limit rules."""
    out = {}
    for rule in (policy or {}).get("rules") or ():
        kbps = int(rule.get("max_kbps") or 0)
        if rule.get("type") != "bandwidth_limit" or kbps <= 0:
            continue
        burst = int(rule.get("max_burst_kbps") or 0) or max(1, int(kbps * DEFAULT_BURST_RATE))
        out[rule.get("direction") or EGRESS] = (kbps, burst)
    return out


def _limits(address: str, policy: Mapping[str, Any] | None) -> list[IpLimit]:
    return [IpLimit(direction, address, kbps, burst)
            for direction, (kbps, burst) in sorted(rates(policy).items())]


def shaping(desired: model.DesiredRouter, policies: Mapping[str, Mapping[str, Any]],
            extensions: frozenset[str]) -> Shaping | None:
    """What the router's gateway device must limit (None: it has none)."""
    if desired.gateway_device is None:
        return None
    limits: list[IpLimit] = []
    if FIP_QOS in extensions:
        for fip in desired.floating_ips:
            if fip.qos_policy_id:
                limits += _limits(fip.floating_ip_address, policies.get(fip.qos_policy_id))
    if GATEWAY_IP_QOS in extensions and desired.gateway_qos_policy_id:
        policy = policies.get(desired.gateway_qos_policy_id)
        for address in desired.gateway_ips:
            limits += _limits(address, policy)
    return Shaping(desired.gateway_device, tuple(limits))


def _classes(device: str, limits: list[IpLimit], match: str) -> list[str]:
    lines = [f"qdisc add dev {device} root handle 1: htb"]
    for n, limit in enumerate(limits, start=1):
        lines += [f"class add dev {device} parent 1: classid 1:{n:x} htb "
                  f"rate {limit.kbps}kbit ceil {limit.kbps}kbit burst {limit.burst_kb}kbit",
                  f"filter add dev {device} parent 1: protocol ip prio 1 u32 "
                  f"match ip {match} {limit.address}/32 flowid 1:{n:x}"]
    return lines


def tc_batch(plan: Shaping) -> str:
    """``tc -batch`` lines that add the limits to a device (and IFB) without any."""
    lines: list[str] = []
    egress, ingress = plan.of(EGRESS), plan.of(INGRESS)
    if egress:
        lines += _classes(plan.device, egress, "src")
    if ingress:
        lines.append(f"qdisc add dev {plan.device} ingress")
        lines += [f"filter add dev {plan.device} parent ffff: protocol ip prio 1 u32 "
                  f"match ip dst {limit.address}/32 action mirred egress redirect dev {plan.ifb}"
                  for limit in ingress]
        lines += _classes(plan.ifb, ingress, "dst")
    return "".join(f"{line}\n" for line in lines)
