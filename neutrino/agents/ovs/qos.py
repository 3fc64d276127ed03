"""The ``qos`` agent extension's pure core: a port's QoS policy in, what the
switch must do out.

What this switch (userspace ``netdev`` datapath) really enforces, measured
with TCP between two instances on one br-int:

- ``bandwidth_limit`` egress (traffic from the instance): an OpenFlow meter
  (``kbps``, drop band) on the packets entering br-int from the port. OVS's
  ``ingress_policing_rate`` does *not* limit here: it is a kernel tc
  ingress policer, and the userspace datapath reads the veth's packets
  before tc sees them.
- ``bandwidth_limit`` ingress (traffic to the instance): egress shaping on
  the port (a ``linux-htb`` QoS row with one queue's ``max-rate``); OVS
  sends through the kernel's qdisc, so the htb class does limit.
- ``dscp_marking``: the DSCP of the instance's IP packets, set on the same
  br-int entry flow as the meter.

Other rule types are not enforced by the agent.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neutrino.agents.ovs.flows import INT_ENTRY, INT_SWITCH, Flow

ENTRY_PRIORITY = 5  # above br-int's default entry flow, below the dead-VLAN drop


@dataclass(frozen=True)
class Limit:
    kbps: int
    burst_kb: int


@dataclass(frozen=True)
class PortQos:
    egress: Limit | None = None  # from the instance: a meter
    ingress: Limit | None = None  # to the instance: shaping on the port
    dscp: int | None = None

    @property
    def empty(self) -> bool:
        return self.egress is None and self.ingress is None and self.dscp is None


def _limit(rule: dict[str, Any]) -> Limit | None:
    kbps = int(rule.get("max_kbps") or 0)
    if kbps <= 0:
        return None
    # upstream's default burst when none is given: 80% of the rate
    return Limit(kbps, int(rule.get("max_burst_kbps") or 0) or max(1, kbps * 8 // 10))


def port_qos(policy: dict[str, Any] | None) -> PortQos:
    egress = ingress = dscp = None
    for rule in (policy or {}).get("rules") or []:
        kind = rule.get("type")
        if kind == "bandwidth_limit":
            if (rule.get("direction") or "egress") == "egress":
                egress = _limit(rule)
            else:
                ingress = _limit(rule)
        elif kind == "dscp_marking" and rule.get("dscp_mark") is not None:
            dscp = int(rule["dscp_mark"])
    return PortQos(egress, ingress, dscp)


def meter_spec(meter_id: int, limit: Limit) -> str:
    return (f"meter={meter_id},kbps,burst,band=type=drop,rate={limit.kbps},"
            f"burst_size={limit.burst_kb}")


def entry_flows(port: str, ofport: int, qos: PortQos) -> list[Flow]:
    """br-int table 0 for a port with egress rules: its meter (numbered by its
    ofport) and DSCP before the usual pipeline. IP and IPv6 get the DSCP;
    everything else only the meter."""
    if qos.egress is None and qos.dscp is None:
        return []
    meter = f"meter:{ofport}," if qos.egress else ""
    out = [Flow(INT_ENTRY, ENTRY_PRIORITY, f"in_port={port}",
                f"{meter}resubmit(,{INT_SWITCH})")]
    if qos.dscp is not None:
        for proto in ("ip", "ipv6"):
            out.append(Flow(INT_ENTRY, ENTRY_PRIORITY + 1, f"in_port={port},{proto}",
                            f"{meter}mod_nw_tos:{qos.dscp << 2},resubmit(,{INT_SWITCH})"))
    return out
