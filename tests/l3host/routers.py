"""Router dicts in the shape of upstream's ``sync_routers`` (what the server sends)."""
from __future__ import annotations

import uuid
from typing import Any


def _port(network_id: str, subnet_id: str, cidr: str, gateway: str | None, ip: str,
          mac: str, mtu: int = 1500, device_owner: str = "network:router_interface",
          port_id: str | None = None) -> dict[str, Any]:
    return {"id": port_id or str(uuid.uuid4()), "network_id": network_id,
            "mac_address": mac, "device_owner": device_owner, "mtu": mtu,
            "fixed_ips": [{"subnet_id": subnet_id, "ip_address": ip,
                           "prefixlen": int(cidr.split("/")[1])}],
            "subnets": [{"id": subnet_id, "cidr": cidr, "gateway_ip": gateway,
                         "dns_nameservers": [], "ipv6_ra_mode": None,
                         "subnetpool_id": None}],
            "extra_subnets": [], "address_scopes": {"4": None, "6": None}}


def interface(cidr: str, ip: str, mac: str, **kw: Any) -> dict[str, Any]:
    return _port(str(uuid.uuid4()), str(uuid.uuid4()), cidr, ip, ip, mac, **kw)


def gateway(cidr: str, ip: str, gateway_ip: str | None, mac: str, **kw: Any) -> dict[str, Any]:
    return _port(str(uuid.uuid4()), str(uuid.uuid4()), cidr, gateway_ip, ip, mac,
                 device_owner="network:router_gateway", **kw)


def fip(floating: str, fixed: str, router_id: str, status: str = "DOWN") -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "floating_ip_address": floating,
            "fixed_ip_address": fixed, "port_id": str(uuid.uuid4()),
            "router_id": router_id, "status": status, "floating_network_id": "ext"}


def router(interfaces: list[dict[str, Any]], gw: dict[str, Any] | None = None,
           fips: list[dict[str, Any]] | None = None, routes: list[dict[str, str]] | None = None,
           enable_snat: bool = True, router_id: str | None = None) -> dict[str, Any]:
    rid = router_id or str(uuid.uuid4())
    r: dict[str, Any] = {
        "id": rid, "name": "r", "admin_state_up": True, "status": "ACTIVE",
        "project_id": "p", "distributed": False, "ha": False,
        "gw_port_id": gw["id"] if gw else None, "enable_snat": enable_snat,
        "external_gateway_info": ({"network_id": gw["network_id"], "enable_snat": enable_snat,
                                   "external_fixed_ips": [
                                       {"subnet_id": f["subnet_id"],
                                        "ip_address": f["ip_address"]}
                                       for f in gw["fixed_ips"]]} if gw else None),
        "routes": routes or [], "_interfaces": interfaces, "_floatingips": [],
    }
    if gw:
        r["gw_port"] = gw
    for f in fips or []:
        f["router_id"] = rid
        r["_floatingips"].append(f)
    return r
