"""A server for the routed-network tests: VLAN ranges on two physical
networks, the Open vSwitch mechanism driver (ports bind where an agent maps
the segment's physical network), and the segments and trunk plugins."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from tests.api._helpers import created
from tests.conftest import Client, Server

CONF = ("service_plugins = segments,trunk\n"
        "[ml2]\ntype_drivers = local,flat,vlan,vxlan\ntenant_network_types = vxlan\n"
        "mechanism_drivers = openvswitch\n"
        "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:100:150,physnet2:200:250,physnet3\n"
        "[ml2_type_vxlan]\nvni_ranges = 1000:1100\n")


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("segments"), extra=CONF).start()
    yield srv
    srv.stop()


def vlan_network(admin: Client, physnet: str = "physnet1", **extra: Any) -> dict[str, Any]:
    body = {"name": f"routed-{uuid.uuid4().hex[:6]}", "provider:network_type": "vlan",
            "provider:physical_network": physnet, **extra}
    return created(admin.post("/v2.0/networks", {"network": body}), "network")


def segments_of(admin: Client, network_id: str) -> list[dict[str, Any]]:
    status, body = admin.get(f"/v2.0/segments?network_id={network_id}")
    assert status == 200, body
    return body["segments"]


def add_segment(admin: Client, network_id: str, physnet: str = "physnet2",
                **extra: Any) -> dict[str, Any]:
    body = {"network_id": network_id, "network_type": "vlan", "physical_network": physnet,
            **extra}
    return created(admin.post("/v2.0/segments", {"segment": body}), "segment")
