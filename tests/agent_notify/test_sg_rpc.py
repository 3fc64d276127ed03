"""Agents ask for their devices' security groups: rules once per group,
remote groups' member addresses, provider (DHCP) rules per device."""
from __future__ import annotations

from typing import Any, Callable

from tests.agent_notify.recorder import RecordingAgent
from tests.agent_notify.test_agent_notifier import network, port
from tests.conftest import Client


def group(admin: Client, name: str, stateful: bool = True) -> str:
    status, body = admin.post("/v2.0/security-groups", {"security_group": {
        "name": name, "stateful": stateful}})
    assert status == 201, body
    return str(body["security_group"]["id"])


def rule(admin: Client, sg: str, **fields: Any) -> None:
    status, body = admin.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": sg, **fields}})
    assert status == 201, body


def ips(p: dict[str, Any]) -> list[str]:
    return [ip["ip_address"] for ip in p["fixed_ips"]]


def test_info_for_devices_gives_rules_per_group_and_remote_group_members(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    agent = agents()
    web, db = group(admin, "web"), group(admin, "db", stateful=False)
    rule(admin, web, direction="ingress", ethertype="IPv4", protocol="tcp",
         port_range_min=80, port_range_max=80, remote_ip_prefix="10.0.0.0/8")
    rule(admin, db, direction="ingress", ethertype="IPv4", protocol="tcp",
         port_range_min=5432, port_range_max=5432, remote_group_id=web)
    net = network(admin)
    w1 = port(admin, net, security_groups=[web])
    # the pair's address is off the subnet: were it one a port was given, the
    # members (address, MAC or None) would not sort
    w2 = port(admin, net, security_groups=[web], allowed_address_pairs=[
        {"ip_address": "10.99.0.200", "mac_address": "fa:16:3e:00:00:99"}])
    d1 = port(admin, net, security_groups=[db])
    dhcp = port(admin, net, device_owner="network:dhcp")
    assert agent.api is not None
    info = agent.api.security_group_info_for_devices([w1["id"], d1["id"][:11], dhcp["id"]])
    assert sorted(info["devices"]) == sorted([w1["id"], d1["id"]])  # DHCP port: trusted
    device = info["devices"][d1["id"]]
    assert device["device"] == d1["id"][:11] and device["fixed_ips"] == ips(d1)
    assert device["security_groups"] == [db]
    assert device["security_group_source_groups"] == [web]
    assert {"direction": "ingress", "ethertype": "IPv4", "protocol": "udp",
            "port_range_min": 68, "port_range_max": 68, "source_port_range_min": 67,
            "source_port_range_max": 67,
            "dest_ip_prefix": f"{ips(d1)[0]}/32"} in device["security_group_rules"]
    assert {"direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
            "port_range_min": 80, "port_range_max": 80, "source_ip_prefix": "10.0.0.0/8",
            "stateful": True} in info["security_groups"][web]
    assert {"direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
            "port_range_min": 5432, "port_range_max": 5432, "remote_group_id": web,
            "stateful": False} in info["security_groups"][db]
    # a new group's default egress rules, once per group
    assert {"direction": "egress", "ethertype": "IPv6",
            "stateful": False} in info["security_groups"][db]
    members = sorted(tuple(m) for m in info["sg_member_ips"][web]["IPv4"])
    assert members == sorted([(ips(w1)[0], None), (ips(w2)[0], None),
                              ("10.99.0.200", "fa:16:3e:00:00:99")])
    assert list(info["sg_member_ips"]) == [web]


def test_rules_for_devices_expand_remote_groups_to_addresses(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    agent = agents()
    sg = group(admin, "self")
    rule(admin, sg, direction="ingress", ethertype="IPv4", protocol="icmp",
         remote_group_id=sg)
    net = network(admin)
    a, b = port(admin, net, security_groups=[sg]), port(admin, net, security_groups=[sg])
    assert agent.api is not None
    devices = agent.api.security_group_rules_for_devices([a["id"]])
    rules = devices[a["id"]]["security_group_rules"]
    icmp = [r for r in rules if r.get("protocol") == "icmp"]
    # the device's own address is left out; the other member's becomes a prefix
    assert icmp == [{"security_group_id": sg, "direction": "ingress", "ethertype": "IPv4",
                     "protocol": "icmp", "remote_group_id": sg,
                     "source_ip_prefix": f"{ips(b)[0]}/32"}]
    assert devices[a["id"]]["security_group_source_groups"] == [sg]


def test_unknown_devices_get_nothing(admin: Client,
                                     agents: Callable[..., RecordingAgent]) -> None:
    agent = agents()
    assert agent.api is not None
    info = agent.api.security_group_info_for_devices(["0" * 36])
    assert info == {"devices": {}, "security_groups": {}, "sg_member_ips": {}}
