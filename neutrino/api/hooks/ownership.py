"""Ownership validation hook: where a caller may put a port or subnet.

Kept apart from policy because upstream answers it differently: a port on
a network the caller cannot see is 404 (the network "does not exist" for
them), not the 403 a policy refusal gives.
"""
from __future__ import annotations

from typing import Any

from neutrino import errors
from neutrino.context import Context
from neutrino.resources.attributes import ResourceDef


def check_ownership(api: Any, rdef: ResourceDef, ctx: Context, data: dict[str, Any],
                    targets: Any) -> None:
    """Ports go only on networks the caller can see (else 404, as upstream).

    Subnets are left to the ``create_subnet`` rule, which upstream answers
    with 403 on another project's network.
    """
    net_id = data.get("network_id")
    if not net_id or rdef.singular != "port":
        return
    network = targets.network(net_id)
    if network is None:
        raise errors.NetworkNotFound(net_id=net_id)
    if ctx.is_admin or ctx.is_advsvc:
        return
    if not api.policy.check(ctx, "get_network", network):
        raise errors.NetworkNotFound(net_id=net_id)
    if network.get("shared") or network["project_id"] == data.get("project_id"):
        return
    raise errors.NotAuthorized(
        message=f"Tenant {data.get('project_id')} not allowed to create "
                f"{rdef.singular} on this network")
