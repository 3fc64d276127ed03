"""Provider networks over HTTP, starting with the first source document's scenario.

The server is configured as in that document: project networks are VLANs
from ``physnet1:3456:3457``, so exactly two exist at a time. Every test
deletes what it created, so the two VLANs are free when the next one starts.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server

NO_NETWORK = "Unable to create the network. No tenant network is available for allocation."
PROVIDER = ("provider:network_type", "provider:physical_network", "provider:segmentation_id")
REFERENCE = Path("/work/shared/conformance/reference/GET-v2.0-extensions.json")
CONF = """
[ml2]
type_drivers = local,flat,vlan,vxlan
tenant_network_types = vlan
[ml2_type_vlan]
network_vlan_ranges = physnet1:3456:3457,physnet2
[ml2_type_vxlan]
vni_ranges = 100:101
"""


@pytest.fixture(scope="module")
def vlan_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("ml2"), extra=CONF).start()
    yield srv
    srv.stop()


class Tracked(Client):
    """A client that deletes, at teardown, the networks it created."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.created: list[str] = []

    def post(self, path: str, body: object, **kw: object):
        status, data = super().post(path, body, **kw)
        if status == 201 and path == "/v2.0/networks":
            self.created.append(data["network"]["id"])
        return status, data

    def cleanup(self) -> None:
        for net_id in self.created:
            self.delete(f"/v2.0/networks/{net_id}")


@pytest.fixture
def admin(vlan_server: Server) -> Iterator[Tracked]:
    client = Tracked(vlan_server.url, "admin-project", "admin")
    yield client
    client.cleanup()


@pytest.fixture
def member(vlan_server: Server) -> Iterator[Tracked]:
    client = Tracked(vlan_server.url, uuid.uuid4().hex, "member")
    yield client
    client.cleanup()


def _provider(net: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(net[k] for k in PROVIDER)


def test_seed_two_project_networks_get_both_vlans_and_the_third_is_refused(admin, member):
    first, second = h.network(member, name="wp-test-net"), h.network(member, name="wp-test-net2")
    assert not set(PROVIDER) & (set(first) | set(second))
    assert first["mtu"] == second["mtu"] == 1500
    msg = h.error(member.post("/v2.0/networks", {"network": {"name": "wp-test-net3"}}), 503,
                  "NoNetworkAvailable")
    assert msg == NO_NETWORK
    seen = [admin.get(f"/v2.0/networks/{n['id']}")[1]["network"] for n in (first, second)]
    assert sorted(_provider(n) for n in seen) == [("vlan", "physnet1", 3456),
                                                  ("vlan", "physnet1", 3457)]
    # Without provider attributes an admin draws from the same exhausted pool.
    assert h.error(admin.post("/v2.0/networks", {"network": {"name": "n3"}}), 503,
                   "NoNetworkAvailable") == NO_NETWORK


def test_seed_admin_variants_name_what_is_missing_and_may_go_outside_the_ranges(admin):
    def create(**attrs: Any) -> tuple[int, Any]:
        return admin.post("/v2.0/networks", {"network": {"name": "wp-test-net3", **attrs}})
    assert h.error(create(**{"provider:segmentation_id": 3455}), 400, "InvalidInput") == (
        "Invalid input for operation: network_type required.")
    assert h.error(create(**{"provider:segmentation_id": 3455,
                             "provider:network_type": "vlan"}), 400, "InvalidInput") == (
        "Invalid input for operation: segmentation_id requires physical_network for VLAN "
        "provider network.")
    net = h.created(create(**{"provider:segmentation_id": 3455, "provider:network_type": "vlan",
                              "provider:physical_network": "physnet1"}), "network")
    assert _provider(net) == ("vlan", "physnet1", 3455) and net["mtu"] == 1500
    msg = h.error(create(**{"provider:segmentation_id": 3455, "provider:network_type": "vlan",
                            "provider:physical_network": "physnet1"}), 409, "VlanIdInUse")
    assert msg == ("Unable to create the network. The VLAN 3455 on physical network physnet1 "
                   "is in use.")


@pytest.mark.parametrize("attrs", [
    {"provider:network_type": "vlan"},
    {"provider:physical_network": "physnet1"},
    {"provider:segmentation_id": 3455},
    {"segments": [{"provider:network_type": "vlan"}]},
])
def test_project_members_may_not_set_provider_attributes(member, attrs):
    status, body = member.post("/v2.0/networks", {"network": {"name": "x", **attrs}})
    assert status == 403, body
    assert body["NeutronError"]["type"] == "PolicyNotAuthorized"


def test_project_members_do_not_see_provider_attributes(admin, member):
    net = h.network(member)
    for path in (f"/v2.0/networks/{net['id']}",
                 f"/v2.0/networks/{net['id']}?fields=provider:network_type&fields=name"):
        shown = member.get(path)[1]["network"]
        assert not set(PROVIDER) & set(shown)
    listed = [n for n in member.get("/v2.0/networks")[1]["networks"] if n["id"] == net["id"]]
    assert listed and not set(PROVIDER) & set(listed[0])
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"]["provider:network_type"] == "vlan"


def test_deleting_a_network_gives_its_vlan_back(admin, member):
    first, second = h.network(member), h.network(member)
    freed = admin.get(f"/v2.0/networks/{first['id']}")[1]["network"]["provider:segmentation_id"]
    assert member.delete(f"/v2.0/networks/{first['id']}") == (204, None)
    third = h.network(member)
    got = admin.get(f"/v2.0/networks/{third['id']}")[1]["network"]["provider:segmentation_id"]
    assert got == freed
    assert second["id"] != third["id"]


def test_deleting_an_off_range_network_frees_its_vlan_for_the_next_admin(admin):
    attrs = {"provider:network_type": "vlan", "provider:physical_network": "physnet2",
             "provider:segmentation_id": 42}
    net = h.network(admin, **attrs)
    h.error(admin.post("/v2.0/networks", {"network": attrs}), 409, "VlanIdInUse")
    assert admin.delete(f"/v2.0/networks/{net['id']}") == (204, None)
    assert _provider(h.network(admin, **attrs)) == ("vlan", "physnet2", 42)


def test_multi_provider_segments_are_listed_and_exclusive_with_provider_values(admin):
    segments = [{"provider:network_type": "vlan", "provider:physical_network": "physnet2",
                 "provider:segmentation_id": 77},
                {"provider:network_type": "local"}]
    net = h.network(admin, segments=segments)
    assert net["segments"] == [
        {"provider:network_type": "vlan", "provider:physical_network": "physnet2",
         "provider:segmentation_id": 77},
        {"provider:network_type": "local", "provider:physical_network": None,
         "provider:segmentation_id": None}]
    assert not set(PROVIDER) & set(net)
    msg = h.error(admin.post("/v2.0/networks", {"network": {
        "provider:network_type": "vlan", "segments": segments}}), 400,
        "SegmentsSetInConjunctionWithProviders")
    assert msg == "Segments and provider values cannot both be set."
    h.error(admin.post("/v2.0/networks", {"network": {"segments": [segments[0], segments[0]]}}),
            400, "SegmentsContainDuplicateEntry")


def test_tunnel_network_mtu_leaves_room_for_the_headers(admin):
    net = h.network(admin, **{"provider:network_type": "vxlan"})
    assert net["provider:segmentation_id"] in (100, 101) and net["mtu"] == 1450
    msg = h.error(admin.post("/v2.0/networks", {"network": {
        "provider:network_type": "vxlan", "mtu": 1451}}), 400, "InvalidInput")
    assert msg == "Invalid input for operation: Requested MTU is too big, maximum is 1450."
    h.error(admin.put(f"/v2.0/networks/{net['id']}", {"network": {"mtu": 1500}}), 400,
            "InvalidInput")
    assert admin.put(f"/v2.0/networks/{net['id']}", {"network": {"mtu": 1400}})[0] == 200


def test_tunnel_and_flat_conflicts_are_409(admin):
    h.network(admin, **{"provider:network_type": "vxlan", "provider:segmentation_id": 5000})
    msg = h.error(admin.post("/v2.0/networks", {"network": {
        "provider:network_type": "vxlan", "provider:segmentation_id": 5000}}), 409,
        "TunnelIdInUse")
    assert msg == "Unable to create the network. The tunnel ID 5000 is in use."
    flat = {"provider:network_type": "flat", "provider:physical_network": "physnet1"}
    assert _provider(h.network(admin, **flat)) == ("flat", "physnet1", None)
    msg = h.error(admin.post("/v2.0/networks", {"network": flat}), 409, "FlatNetworkInUse")
    assert msg == "Unable to create the flat network. Physical network physnet1 is in use."


def test_unknown_network_type_and_bad_values_are_400(admin):
    assert h.error(admin.post("/v2.0/networks", {"network": {
        "provider:network_type": "gre"}}), 400, "InvalidInput") == (
        "Invalid input for operation: network_type value 'gre' not supported.")
    assert h.error(admin.post("/v2.0/networks", {"network": {
        "provider:network_type": "vlan", "provider:segmentation_id": "abc"}}), 400) == (
        "Invalid input for operation: 'abc' is not an integer.")
    assert h.error(admin.post("/v2.0/networks", {"network": {
        "provider:network_type": "vlan", "provider:physical_network": "physnet1",
        "provider:segmentation_id": 4095}}), 400, "InvalidInput") == (
        "Invalid input for operation: segmentation_id out of range (1 through 4094).")


def test_networks_can_be_filtered_by_provider_attributes(admin):
    vlan = h.network(admin, **{"provider:network_type": "vlan",
                               "provider:physical_network": "physnet2",
                               "provider:segmentation_id": 88})
    local = h.network(admin, **{"provider:network_type": "local"})
    ids = {n["id"] for n in admin.get("/v2.0/networks?provider:segmentation_id=88")[1]["networks"]}
    assert ids == {vlan["id"]}
    ids = {n["id"] for n in admin.get("/v2.0/networks?provider:network_type=local")[1]["networks"]}
    assert local["id"] in ids and vlan["id"] not in ids


def test_only_the_segmentation_id_of_a_network_can_change(admin):
    net = h.network(admin, **{"provider:network_type": "vlan",
                              "provider:physical_network": "physnet2",
                              "provider:segmentation_id": 120})
    status, body = admin.put(f"/v2.0/networks/{net['id']}",
                             {"network": {"provider:segmentation_id": 121}})
    assert status == 200 and body["network"]["provider:segmentation_id"] == 121
    other = h.network(admin, **{"provider:network_type": "vlan",
                                "provider:physical_network": "physnet2",
                                "provider:segmentation_id": 120})  # 120 was given back
    assert other["provider:segmentation_id"] == 120
    msg = h.error(admin.put(f"/v2.0/networks/{net['id']}",
                            {"network": {"provider:network_type": "vxlan"}}), 400, "InvalidInput")
    assert "Plugin does not support updating the following provider network attributes" in msg


def test_extensions_list_provider_and_multi_provider_as_upstream(admin):
    reference = {e["alias"]: e for e in json.loads(REFERENCE.read_text())["extensions"]}
    for alias in ("provider", "multi-provider"):
        status, body = admin.get(f"/v2.0/extensions/{alias}")
        assert status == 200 and body["extension"] == reference[alias]
