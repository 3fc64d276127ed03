"""``openstack network segment ...`` and openstacksdk's segments against neutrino."""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.clients.conftest import CLI
from tests.clients.module_fixtures import cli, conn  # noqa: F401 - the fixtures
from tests.conftest import Client

pytestmark = pytest.mark.clients


def test_cli_creates_lists_updates_and_deletes_segments(cli: CLI, admin: Client) -> None:
    name = f"seg-{uuid.uuid4().hex[:6]}"
    net = cli.json("network", "create", name, "--provider-network-type", "vlan",
                   "--provider-physical-network", "physnet1")
    created = cli.json("network", "segment", "create", name, "--network", name,
                       "--network-type", "vlan", "--physical-network", "physnet2",
                       "--segment", "3333", "--description", "second")
    assert (created["name"], created["network_type"], created["physical_network"],
            created["segmentation_id"], created["description"]) == (
        name, "vlan", "physnet2", 3333, "second")
    own = admin.get(f"/v2.0/segments?network_id={net['id']}")[1]["segments"]
    listed = cli.json("network", "segment", "list", "--network", name)
    assert {s["ID"] for s in listed} == {s["id"] for s in own}
    assert len(listed) == 2 and 3333 in {s["Segment"] for s in listed}
    cli.run("network", "segment", "set", created["id"], "--name", f"{name}-b",
            "--description", "renamed")
    shown = cli.json("network", "segment", "show", created["id"])
    assert (shown["name"], shown["description"]) == (f"{name}-b", "renamed")
    cli.run("network", "segment", "delete", created["id"])
    assert admin.get(f"/v2.0/segments/{created['id']}")[0] == 404


def test_sdk_segments_and_a_routed_subnet(conn: Any) -> None:
    net = conn.network.create_network(name=f"sdk-{uuid.uuid4().hex[:6]}",
                                      provider_network_type="vlan",
                                      provider_physical_network="physnet1")
    seg = conn.network.create_segment(network_id=net.id, network_type="vlan",
                                      physical_network="physnet2", name="sdk-seg")
    assert seg.segmentation_id is not None and seg.name == "sdk-seg"
    assert {s.id for s in conn.network.segments(network_id=net.id)} >= {seg.id}
    sub = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.30.0.0/24",
                                     segment_id=seg.id)
    assert sub.segment_id == seg.id
    conn.network.delete_subnet(sub)
    conn.network.delete_segment(seg)
    assert conn.network.find_segment(seg.id) is None
    conn.network.delete_network(net)
