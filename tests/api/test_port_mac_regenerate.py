"""``port-mac-address-regenerate`` (a null MAC asks for a new one, only while
the port is not bound) and ``port-mac-override`` (a direct-physical port
takes its device's MAC from the binding profile), as upstream."""
from __future__ import annotations

import netaddr
import pytest

from neutrino.plugins.ml2.agents_db import AGENT_TYPE_OVS
from tests.api import _helpers as h
from tests.conftest import Client
from tests.ml2.binding_helpers import report_agent


@pytest.fixture
def nova(server, project_id):
    """The compute service acting on the member's ports (binding profiles)."""
    return Client(server.url, project_id, "service")


def _aliases(client):
    return {e["alias"] for e in client.get("/v2.0/extensions")[1]["extensions"]}


def test_mac_regenerate_and_override_are_listed(member):
    assert {"port-mac-address-regenerate", "port-mac-override"} <= _aliases(member)


def test_admin_regenerates_an_unbound_ports_mac_with_null(member, admin):
    net = h.network(member)
    port = h.port(member, net["id"])
    url = f"/v2.0/ports/{port['id']}"
    status, body = admin.put(url, {"port": {"mac_address": None}})
    assert status == 200, body
    new = body["port"]["mac_address"]
    assert new != port["mac_address"] and netaddr.valid_mac(new)
    assert new.startswith("fa:16:3e:")
    assert body["port"]["revision_number"] > port["revision_number"]
    assert member.get(url)[1]["port"]["mac_address"] == new
    # Another update without the MAC keeps it.
    assert admin.put(url, {"port": {"name": "x"}})[1]["port"]["mac_address"] == new


def test_regenerated_mac_readdresses_the_ports_slaac_addresses(member, admin):
    net = h.network(member)
    h.subnet(member, net["id"], "2001:db8:1::/64", ipv6_address_mode="slaac",
             ipv6_ra_mode="slaac")
    port = h.port(member, net["id"])
    old_ip = port["fixed_ips"][0]["ip_address"]
    body = admin.put(f"/v2.0/ports/{port['id']}", {"port": {"mac_address": None}})[1]["port"]
    new_ip = body["fixed_ips"][0]["ip_address"]
    assert new_ip != old_ip
    eui = netaddr.EUI(body["mac_address"]).ipv6(netaddr.IPNetwork("2001:db8:1::/64").first)
    assert netaddr.IPAddress(new_ip) == eui


def test_member_may_not_regenerate_the_mac(member, other):
    net = h.network(member)
    port = h.port(member, net["id"])
    url = f"/v2.0/ports/{port['id']}"
    msg = h.error(member.put(url, {"port": {"mac_address": None}}), 403, "PolicyNotAuthorized")
    assert msg == "(rule:update_port and rule:update_port:mac_address) is disallowed by policy"
    h.error(other.put(url, {"port": {"mac_address": None}}), 404, "PortNotFound")
    assert member.get(url)[1]["port"]["mac_address"] == port["mac_address"]


def test_null_mac_on_create_is_a_generated_one(member):
    net = h.network(member)
    port = h.port(member, net["id"], mac_address=None)
    assert port["mac_address"].startswith("fa:16:3e:")


def test_a_bound_ports_mac_cannot_change(member, admin, server):
    net = h.network(member)
    port = h.port(member, net["id"])
    url = f"/v2.0/ports/{port['id']}"
    _report_ovs_agent(admin, server, "portext-host-1")
    bound = admin.put(url, {"port": {"binding:host_id": "portext-host-1"}})[1]["port"]
    assert bound["binding:vif_type"] == "ovs", bound
    for mac in (None, "fa:16:3e:aa:bb:cc"):
        msg = h.error(admin.put(url, {"port": {"mac_address": mac}}), 409, "PortBound")
        assert msg.startswith(f"Unable to complete operation on port {port['id']}, port is "
                              f"already bound, port type: ovs, old_mac {port['mac_address']}, "
                              "new_mac ")
    assert member.get(url)[1]["port"]["mac_address"] == port["mac_address"]
    # Unbound again (no host), the MAC may change.
    admin.put(url, {"port": {"binding:host_id": ""}})
    assert admin.put(url, {"port": {"mac_address": None}})[0] == 200


def test_numa_policy_of_a_bound_port_cannot_change(member, admin, server):
    net = h.network(member)
    port = h.port(member, net["id"], numa_affinity_policy="legacy")
    url = f"/v2.0/ports/{port['id']}"
    _report_ovs_agent(admin, server, "portext-host-2")
    admin.put(url, {"port": {"binding:host_id": "portext-host-2"}})
    msg = h.error(member.put(url, {"port": {"numa_affinity_policy": "required"}}),
                  409, "PortBoundNUMAAffinityPolicy")
    assert msg == (f"Unable to complete operation on port {port['id']}, port is already "
                   "bound to host portext-host-2, numa_affinity_policy value given required.")
    assert member.get(url)[1]["port"]["numa_affinity_policy"] == "legacy"


def test_direct_physical_port_takes_the_device_mac_from_its_profile(member, nova):
    net = h.network(member)
    port = h.port(nova, net["id"], **{
        "binding:vnic_type": "direct-physical", "binding:host_id": "portext-pf-host",
        "binding:profile": {"device_mac_address": "52:54:00:12:34:56"}})
    assert port["mac_address"] == "52:54:00:12:34:56"
    url = f"/v2.0/ports/{port['id']}"
    assert member.get(url)[1]["port"]["mac_address"] == "52:54:00:12:34:56"
    # The profile without a device MAC: the port gives the device's back.
    body = nova.put(url, {"port": {"binding:profile": {}}})[1]["port"]
    assert body["mac_address"] != "52:54:00:12:34:56"
    assert body["mac_address"].startswith("fa:16:3e:")


def test_direct_physical_port_detached_from_its_instance_gives_the_mac_back(member, nova):
    net = h.network(member)
    port = h.port(nova, net["id"], device_id="vm-1", device_owner="compute:nova", **{
        "binding:vnic_type": "direct-physical", "binding:host_id": "portext-pf-host",
        "binding:profile": {"device_mac_address": "52:54:00:65:43:21"}})
    assert port["mac_address"] == "52:54:00:65:43:21"
    body = nova.put(f"/v2.0/ports/{port['id']}",
                     {"port": {"device_id": "", "device_owner": "",
                               "binding:host_id": ""}})[1]["port"]
    assert body["mac_address"] != "52:54:00:65:43:21"


def test_a_normal_ports_profile_mac_is_ignored(member, nova):
    net = h.network(member)
    port = h.port(nova, net["id"], **{
        "binding:host_id": "portext-pf-host",
        "binding:profile": {"device_mac_address": "52:54:00:00:00:99"}})
    assert port["mac_address"] != "52:54:00:00:00:99"


def _report_ovs_agent(admin, server, host):
    """An Open vSwitch agent alive on ``host`` (its state report), so that a
    port there binds."""
    report_agent(server, AGENT_TYPE_OVS, host, {"bridge_mappings": {"physnet1": "br-eth1"},
                                                 "tunnel_types": ["vxlan", "gre"]})
