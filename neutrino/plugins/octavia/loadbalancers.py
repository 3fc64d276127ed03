"""Creating a load balancer: its provider, flavor and availability zone
checked, its VIP port made (before the transaction, released if the
transaction fails), the load balancer written PENDING_CREATE."""
from __future__ import annotations

import json
import uuid
from typing import Any

from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.plugins.octavia import faults, graph, store
from neutrino.plugins.octavia import provider_api as papi
from neutrino.plugins.octavia.objects import Change
from neutrino.resources import lb_graph as g


class LoadBalancers:
    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    def create(self, ctx: Context, data: dict[str, Any]) -> dict[str, Any]:
        plugin = self.plugin
        project_id = data.get("project_id") or ctx.project_id
        plugin.policy.authorize(ctx, "loadbalancer", "post", project_id)
        for nested in ("listeners", "pools"):
            if data.get(nested) is not None and not isinstance(data[nested], list):
                raise faults.InvalidInput(nested, data[nested], "Value should be a list")
        flavor_data, provider = self._flavor(data)
        az_data = self._zone(data, provider)
        provider = provider or plugin.conf.octavia.default_provider_driver
        if provider not in plugin.conf.octavia.enabled_provider_drivers:
            raise faults.ProviderNotEnabled(prov=provider)
        certificates, secrets = papi.tls_refs([data.get("listeners"), data.get("pools")])
        if certificates or secrets:
            plugin.provider(provider).check_tls_refs(ctx, certificates, secrets)
        if data.get("vip_qos_policy_id"):
            plugin.vips.qos_policy_exists(data["vip_qos_policy_id"])
        vip = plugin.vips.resolve(ctx, data)
        extra_vips = plugin.vips.additional(ctx, vip, data.get("additional_vips"))
        # a caller without a project (noauth's admin) makes it in the VIP's
        project_id = project_id or vip["project_id"]
        if not project_id:
            raise faults.BadRequest("Missing project ID in request where one is required.")
        lb_id = str(uuid.uuid4())
        lb = {"id": lb_id, "kind": "loadbalancer", "project_id": project_id,
              "loadbalancer_id": lb_id, "parent_id": None,
              "provisioning_status": g.PENDING_CREATE, "operating_status": g.OFFLINE,
              "created_at": store.now(), "updated_at": None,
              "name": data.get("name") or "", "description": data.get("description") or "",
              "admin_state_up": data.get("admin_state_up", True),
              "vip_sg_ids": data.get("vip_sg_ids") or [],
              "additional_vips": data.get("additional_vips") or [], "provider": provider,
              "flavor_id": data.get("flavor_id"),
              "vip_qos_policy_id": data.get("vip_qos_policy_id"),
              "tags": data.get("tags") or [],
              "availability_zone": data.get("availability_zone"), "vip_vnic_type": "normal",
              "flavor_data": flavor_data, "availability_zone_data": az_data,
              "vip_port_made": vip["made"]}
        port = None
        if vip["made"]:
            port = plugin.vips.make_port(lb_id, project_id, vip, data.get("vip_sg_ids"),
                                         extra_vips)
            fixed = list(port["fixed_ips"])
            main = next(f for f in fixed if f["subnet_id"] == vip["vip_subnet_id"])
            vip = {**vip, "vip_port_id": port["id"], "vip_address": main["ip_address"]}
            fixed.remove(main)
            lb["additional_vips"] = [{"subnet_id": f["subnet_id"],
                                      "ip_address": f["ip_address"]} for f in fixed]
        lb.update({k: vip[k] for k in ("vip_port_id", "vip_network_id", "vip_subnet_id",
                                       "vip_address")})

        def op(conn: Connection) -> tuple[dict[str, Any], g.LoadBalancer]:
            plugin.quotas.check(conn, "loadbalancer", project_id, 1)
            store.insert(conn, lb)
            if data.get("listeners") or data.get("pools"):
                plugin.objects.create_tree(conn, ctx, lb, data.get("listeners") or [],
                                           data.get("pools") or [])
            objs = graph.Objects(store.of_loadbalancer(conn, lb_id))
            built = graph.build(objs.by_id[lb_id], objs)
            try:
                plugin.provider(provider).check(built)
            except papi.UnsupportedOption as exc:
                raise faults.ProviderUnsupported(prov=provider, user_msg=str(exc)) from None
            view = graph.view(objs.by_id[lb_id], objs)
            if data.get("listeners") or data.get("pools"):
                # a single-call create answers with the whole tree, as Octavia
                view["listeners"] = [graph.view(x, objs) for x in objs.in_lb(lb_id, "listener")]
                view["pools"] = [graph.view(x, objs) for x in objs.in_lb(lb_id, "pool")]
            return view, built
        try:
            view, built = plugin.write(op)
        except Exception:
            if port is not None:
                plugin.vips.release(port["id"])
            raise
        plugin.hand_over(Change(provider, built, "loadbalancer_create", lb_id))
        return view  # type: ignore[no-any-return]

    def _flavor(self, data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        provider = data.get("provider")
        flavor_id = data.get("flavor_id")
        if not flavor_id:
            return {}, provider
        flavor = self.plugin.definitions.find("flavor", flavor_id)
        if flavor is None:
            raise faults.InvalidOption(value=flavor_id, option="flavor")
        if not flavor.get("enabled", True):
            raise faults.DisabledOption(option="flavor", value=flavor_id)
        profile = self.plugin.definitions.find("flavorprofile", flavor["flavor_profile_id"])
        if profile is None:
            return {}, provider
        if provider and provider != profile["provider_name"]:
            raise faults.ProviderFlavorMismatch(flav=flavor_id, prov=provider)
        return json.loads(profile["flavor_data"] or "{}"), profile["provider_name"]

    def _zone(self, data: dict[str, Any], provider: str | None) -> dict[str, Any]:
        name = data.get("availability_zone")
        if not name:
            return {}
        zone = self.plugin.definitions.find("availability_zone", name)
        if zone is None:
            raise faults.InvalidOption(value=name, option="availability_zone")
        if not zone.get("enabled", True):
            raise faults.DisabledOption(option="availability_zone", value=name)
        profile = self.plugin.definitions.find("availability_zone_profile",
                                               zone["availability_zone_profile_id"])
        if profile is None:
            return {}
        if provider and provider != profile["provider_name"]:
            raise faults.Validation(detail=f"Availability zone '{name}' is not compatible "
                                    f"with provider '{provider}'")
        return json.loads(profile["availability_zone_data"] or "{}")  # type: ignore[no-any-return]
