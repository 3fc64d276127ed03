"""Shared helpers of the binding API tests: servers with mechanism drivers
and agent rows written the way agents report themselves."""
from __future__ import annotations

import datetime as dt
import os
import uuid
from pathlib import Path
from typing import Any

from neutrino.db.engine import make_engine
from neutrino.plugins.ml2 import agents_db
from tests.conftest import Client, Server

REPO = Path(__file__).resolve().parents[2]
ML2 = ("[ml2]\ntype_drivers = local,flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = {drivers}\n"
       "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:100:150,physnet2:200:250\n"
       "[ml2_type_vxlan]\nvni_ranges = 1000:1100\n")


def start_server(tmp: Path, drivers: str) -> Server:
    """A server whose process can import ``tests`` (test drivers by class path)."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return Server(tmp, extra=ML2.format(drivers=drivers), env={"PYTHONPATH": path}).start()


def report_agent(server: Server, agent_type: str, host: str, configurations: dict[str, Any],
                 age_seconds: int = 0) -> None:
    """Write (or refresh) an agent row as the agent's state report will."""
    engine = make_engine(f"sqlite:///{server.tmp / 'var' / 'neutrino.sqlite'}")
    binary = {agents_db.AGENT_TYPE_OVS: "neutron-openvswitch-agent",
              agents_db.AGENT_TYPE_LINUXBRIDGE: "neutron-linuxbridge-agent",
              agents_db.AGENT_TYPE_NIC_SWITCH: "neutron-sriov-nic-agent"}[agent_type]
    beat = agents_db.utcnow() - dt.timedelta(seconds=age_seconds)
    try:
        with engine.begin() as conn:
            agents_db.report(conn, agent_type, binary, host, "N/A", configurations, beat)
    finally:
        engine.dispose()


def host() -> str:
    return f"host-{uuid.uuid4().hex[:8]}"


def network(admin: Client, **provider: Any) -> dict[str, Any]:
    status, body = admin.post("/v2.0/networks", {"network": {"name": "b", **provider}})
    assert status == 201, body
    return body["network"]


def vlan_net(admin: Client, physnet: str = "physnet1") -> dict[str, Any]:
    return network(admin, **{"provider:network_type": "vlan",
                             "provider:physical_network": physnet})


def port(admin: Client, net: dict[str, Any], **extra: Any) -> dict[str, Any]:
    status, body = admin.post("/v2.0/ports", {"port": {"network_id": net["id"], **extra}})
    assert status == 201, body
    return body["port"]


def update(admin: Client, port_id: str, **changes: Any) -> dict[str, Any]:
    status, body = admin.put(f"/v2.0/ports/{port_id}", {"port": changes})
    assert status == 200, body
    return body["port"]
