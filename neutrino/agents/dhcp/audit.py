"""What a DHCP agent reports it serves, for ``neutrino audit``.

For each network the agent serves or has state for: whether its
``qdhcp-`` namespace exists, whether its dnsmasq runs, and the (MAC,
address) entries dnsmasq's hosts file holds now, read from the file
rather than from what the agent last wrote, so an entry removed behind
its back shows.
"""
from __future__ import annotations

import ipaddress
from typing import Any

from neutrino.agents import iproute
from neutrino.agents.dhcp.driver import DnsmasqDriver, namespace


def host_entries(text: str) -> list[list[str]]:
    """(MAC, address) of each line of a ``--dhcp-hostsfile``."""
    found = []
    for line in text.splitlines():
        parts = line.strip().split(",")
        for part in parts[1:]:
            try:
                address = str(ipaddress.ip_address(part.strip("[]")))
            except ValueError:
                continue
            found.append([parts[0].lower(), address])
            break
    return sorted(found)


def realised(driver: DnsmasqDriver, network_ids: set[str]) -> dict[str, Any]:
    networks = {}
    for network_id in sorted(network_ids | set(driver.existing())):
        try:
            with open(driver.files(network_id).host, encoding="utf-8") as f:
                hosts = host_entries(f.read())
        except OSError:
            hosts = []
        networks[network_id] = {"namespace": iproute.namespace_exists(namespace(network_id)),
                                "dnsmasq": driver.process(network_id).active,
                                "hosts": hosts}
    return {"networks": networks}
