"""VIP ports, made through neutrino's own core plugin in process.

A load balancer's VIP is on a subnet, a network or an existing port, as
Octavia allows: the subnet, network or port must be one the caller sees
(else Octavia's 400 ``Subnet <id> not found.``); given a subnet or network,
the VIP gets a port of its own (device owner ``Octavia``, named
``octavia-lb-<id>``, in the load balancer's project), deleted with the load
balancer; a given port stays.
"""
from __future__ import annotations

import ipaddress
from typing import Any

import sqlalchemy as sa

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import rbac
from neutrino.plugins.octavia import faults

DEVICE_OWNER = "Octavia"


class Vips:
    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    @property
    def core(self) -> Any:
        return self.plugin.core

    def _get(self, ctx: Context, plural: str, rid: str, label: str) -> dict[str, Any]:
        """The network, subnet or port if the caller sees it: its own, or a
        network (a subnet's network) shared with it or external."""
        missing = faults.InvalidSubresource(resource=label, id=rid)
        try:
            found: dict[str, Any] = self.core.get(Context.admin(), plural, rid)
        except errors.NeutronException as exc:
            if exc.code == 404:
                raise missing from None
            raise
        if ctx.is_admin or found.get("project_id") == ctx.project_id:
            return found
        if plural == "ports":
            raise missing
        net_id = found["id"] if plural == "networks" else found["network_id"]
        seen = rbac.network_visible_clause(ctx)
        with self.plugin.db.reader() as conn:
            visible = conn.execute(sa.select(t.networks.c.id).where(
                t.networks.c.id == net_id, *([] if seen is None else [seen]))).first()
        if visible is None:
            raise missing
        return found

    def subnet_visible(self, ctx: Context, subnet_id: str) -> dict[str, Any]:
        return self._get(ctx, "subnets", subnet_id, "Subnet")

    def qos_policy_exists(self, policy_id: str) -> None:
        try:
            self.plugin.qos_policy(policy_id)
        except errors.NeutronException:
            raise faults.InvalidSubresource(resource="QoS Policy", id=policy_id) from None

    def resolve(self, ctx: Context, data: dict[str, Any]) -> dict[str, Any]:
        """The VIP a create asks for: network, subnet, address and an existing
        port, checked; ``port_id`` None when a port is to be made."""
        port_id, net_id, subnet_id = (data.get("vip_port_id"), data.get("vip_network_id"),
                                      data.get("vip_subnet_id"))
        address = data.get("vip_address")
        if not (port_id or net_id or subnet_id):
            raise faults.VIPValidation(objects="vip_port_id, vip_network_id, vip_subnet_id")
        if port_id:
            port = self._get(ctx, "ports", port_id, "Port")
            if net_id and port["network_id"] != net_id:
                raise faults.Validation(detail="vip_network_id does not match the port's "
                                        "network.")
            fixed = port.get("fixed_ips") or []
            chosen = [f for f in fixed if (not subnet_id or f["subnet_id"] == subnet_id)
                      and (not address or f["ip_address"] == address)]
            if not chosen:
                raise faults.Validation(detail=f"No VIP address found on port {port_id}.")
            return {"vip_port_id": port_id, "vip_network_id": port["network_id"],
                    "vip_subnet_id": chosen[0]["subnet_id"],
                    "vip_address": chosen[0]["ip_address"], "made": False,
                    "project_id": port.get("project_id")}
        if subnet_id:
            subnet = self._get(ctx, "subnets", subnet_id, "Subnet")
            if net_id and subnet["network_id"] != net_id:
                raise faults.Validation(detail="Subnet {} is not on network {}.".format(
                    subnet_id, net_id))
            net_id = subnet["network_id"]
            owner = subnet.get("project_id")
            if address and ipaddress.ip_address(address) not in \
                    ipaddress.ip_network(subnet["cidr"]):
                raise faults.Validation(detail=f"VIP address {address} is not on subnet "
                                        f"{subnet_id}.")
        else:
            network = self._get(ctx, "networks", net_id, "Network")
            owner = network.get("project_id")
            subnets = [self.core.get(Context.admin(), "subnets", s)
                       for s in network.get("subnets") or []]
            if not subnets:
                raise faults.Validation(detail="Supplied network does not contain a subnet.")
            if address:
                ip = ipaddress.ip_address(address)
                fits = [s for s in subnets if ip in ipaddress.ip_network(s["cidr"])]
                if not fits:
                    raise faults.Validation(detail=f"VIP address {address} is not on "
                                            f"network {net_id}.")
                subnet_id = fits[0]["id"]
            else:
                v4 = [s for s in subnets if s["ip_version"] == 4]
                subnet_id = (v4 or subnets)[0]["id"]
        return {"vip_port_id": None, "vip_network_id": net_id, "vip_subnet_id": subnet_id,
                "vip_address": address, "made": True, "project_id": owner}

    def additional(self, ctx: Context, vip: dict[str, Any], given: Any) -> list[dict[str, Any]]:
        """``additional_vips``: more addresses of the VIP port, each on a
        subnet of the VIP's network the caller sees."""
        if not given:
            return []
        if not isinstance(given, list) or not all(isinstance(x, dict) for x in given):
            raise faults.InvalidInput("additional_vips", given, "Value should be a list of "
                                      "objects")
        if not vip["made"]:
            raise faults.Validation(detail="additional_vips need the VIP port to be made "
                                    "from a subnet or network, not given.")
        out = []
        for item in given:
            unknown = [k for k in item if k not in ("subnet_id", "ip_address")]
            if unknown or not item.get("subnet_id"):
                raise faults.InvalidInput("additional_vips", given,
                                          "Each needs a subnet_id and may have an ip_address")
            subnet = self._get(ctx, "subnets", str(item["subnet_id"]), "Subnet")
            if subnet["network_id"] != vip["vip_network_id"]:
                raise faults.Validation(detail="All VIP subnets must belong to the same "
                                        "network.")
            address = item.get("ip_address")
            if address is not None:
                ipaddress.ip_address(str(address))
            out.append({"subnet_id": subnet["id"], "ip_address": address})
        return out

    def make_port(self, lb_id: str, project_id: str, vip: dict[str, Any],
                  sg_ids: list[str] | None,
                  extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        fixed: dict[str, Any] = {"subnet_id": vip["vip_subnet_id"]}
        if vip.get("vip_address"):
            fixed["ip_address"] = vip["vip_address"]
        more = [{k: v for k, v in x.items() if v is not None} for x in extra or []]
        item: dict[str, Any] = {
            "project_id": project_id, "network_id": vip["vip_network_id"],
            "name": f"octavia-lb-{lb_id}", "admin_state_up": True,
            "device_id": f"lb-{lb_id}", "device_owner": DEVICE_OWNER,
            "fixed_ips": [fixed, *more]}
        if sg_ids:
            item["security_groups"] = sg_ids
        try:
            port: dict[str, Any] = self.core.create(Context.admin(), "ports", [item])[0]
        except errors.NeutronException as exc:
            if exc.code == 409:
                raise faults.Conflict(str(exc)) from None
            raise faults.Validation(detail=str(exc)) from None
        return port

    def release(self, port_id: str) -> None:
        try:
            self.core.delete(Context.admin(), "ports", port_id)
        except errors.NeutronException:
            pass  # already gone
