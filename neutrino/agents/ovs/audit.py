"""What an OVS agent reports it has realised, for ``neutrino audit``.

The server's database says which ports each host should have; only the
agent knows which of them it wired, with which local VLAN, and how many
flows it programmed under its run's cookie. ``realised`` puts that next to
what the switch holds now (the ports' tags, the flows under the cookie),
so a change made behind the agent's back (a deleted flow, a retagged or
removed port) shows as a difference. A resync (a full pass) repairs it.
"""
from __future__ import annotations

from typing import Any

from neutrino.agents.ovs.plan import Known
from neutrino.agents.ovs.switch import VifPort


def realised(known: Known, vifs: dict[str, VifPort], counts: dict[str, dict[int, int]],
             cookie: int) -> dict[str, Any]:
    """The agent's answer: each wired port with the VLAN it set and the one
    the switch shows (None: the port is gone), and per bridge the flows
    programmed under ``cookie`` and those present."""
    ports = {}
    for pid, wired in known.wired.items():
        vif = vifs.get(pid)
        ports[pid] = {"network_id": wired.network_id, "vlan": known.vlans.get(wired.network_id),
                      "switch_vlan": vif.tag if vif is not None else None,
                      "present": vif is not None}
    flows = {bridge: {"programmed": sum(1 for f in programmed if not f.cookie),
                      "present": counts.get(bridge, {}).get(cookie, 0)}
             for bridge, programmed in known.programmed.items()}
    return {"ports": ports, "flows": flows, "unwired": sorted(set(vifs) - set(known.wired))}
