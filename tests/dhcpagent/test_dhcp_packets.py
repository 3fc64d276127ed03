"""Real packets (root): dnsmasq in ``qdhcp-<net>``, plugged into a Linux
bridge by the BridgeInterfaceDriver, leases fixed IPs to client namespaces
on the same bridge that run busybox udhcpc; everything is removed after."""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from neutrino.agents import iproute
from neutrino.agents.bridge_interface import BridgeInterfaceDriver
from neutrino.agents.dhcp.dnsmasq import Settings
from neutrino.agents.dhcp.driver import DnsmasqDriver, namespace
from tests.dhcpagent._host import Host, dhcp, needs_root

pytestmark = needs_root


def network(net_id: str, ports: list[dict[str, Any]]) -> dict[str, Any]:
    sub = "5b0d1f8e-0000-4000-8000-0000000000a4"
    return {"id": net_id, "mtu": 1400, "subnets": [{
        "id": sub, "cidr": "10.77.0.0/24", "ip_version": 4, "enable_dhcp": True,
        "gateway_ip": "10.77.0.1", "dns_nameservers": [], "host_routes": []}],
        "ports": [dict(p, fixed_ips=[{"subnet_id": sub, "ip_address": p["ip"]}]) for p in ports]}


def test_clients_on_the_bridge_get_their_fixed_ip_router_and_mtu_and_all_is_removed(
        host: Host, confs: str, tmp_path: Path) -> None:
    net_id = str(uuid.uuid4())
    dhcp_port = {"id": str(uuid.uuid4()), "mac_address": "fa:16:3e:77:00:02", "ip": "10.77.0.2",
                 "device_owner": "network:dhcp"}
    vm1 = {"id": str(uuid.uuid4()), "mac_address": "fa:16:3e:77:00:11", "ip": "10.77.0.11",
           "device_owner": "compute:nova"}
    vm2 = {"id": str(uuid.uuid4()), "mac_address": "fa:16:3e:77:00:12", "ip": "10.77.0.12",
           "device_owner": "compute:nova"}
    driver = DnsmasqDriver(confs, Settings(), BridgeInterfaceDriver(host.ns))
    net = network(net_id, [dhcp_port, vm1])
    port = net["ports"][0]
    try:
        driver.enable(net, port)
        device = driver.device_name(port)
        assert iproute.addresses(device, namespace(net_id)) == ["10.77.0.2/24"]
        assert driver.process(net_id).active

        c1 = host.client(vm1["mac_address"], net_id)
        assert dhcp(c1, tmp_path) == {"ip": "10.77.0.11", "router": "10.77.0.1", "mtu": "1400"}
        c2 = host.client(vm2["mac_address"], net_id)
        assert dhcp(c2, tmp_path, tries=3) == {}  # not in the hosts file yet: no lease

        pid = driver.process(net_id).pid
        driver.enable(network(net_id, [dhcp_port, vm1, vm2]), port)  # a port was added
        assert driver.process(net_id).pid == pid  # re-read on SIGHUP, not restarted
        assert dhcp(c2, tmp_path)["ip"] == "10.77.0.12"
    finally:
        driver.disable(net_id, driver.device_name(port))
    assert not iproute.namespace_exists(namespace(net_id))
    assert not os.path.exists(os.path.join(confs, net_id))
    assert not driver.process(net_id).active
    peer = BridgeInterfaceDriver(host.ns).peer_name(device)
    assert not iproute.link_exists(peer, host.ns)
