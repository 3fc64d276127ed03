"""The ``local_ip`` service plugin: local IPs and their port associations on
SQL, pushed to agents.

Made and deleted associations are pushed to every agent on
``neutron-vo-LocalIPAssociation-1.0`` (upstream's resources push); an
agent starting pulls all of them (``rpc``). The port of a local IP cannot
be deleted through the ports API while the local IP exists (upstream's
``ServicePortInUse``); associations go with their port.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.plugins.local_ip.associations import PortAssociations
from neutrino.plugins.local_ip.local_ips import LocalIps
from neutrino.resources import local_ip as res
from neutrino.rpc import topics

MEMBER = "(rule:admin_only) or (role:member and project_id:%(project_id)s)"
READER = "(rule:admin_only) or (role:reader and project_id:%(project_id)s)"
PARENT_MEMBER = "(rule:admin_only) or (role:member and rule:ext_parent_owner)"
PARENT_READER = "(rule:admin_only) or (role:reader and rule:ext_parent_owner)"
POLICIES = {
    "create_local_ip": MEMBER, "get_local_ip": READER,
    "update_local_ip": MEMBER, "delete_local_ip": MEMBER,
    "create_local_ip_port_association": PARENT_MEMBER,
    "get_local_ip_port_association": PARENT_READER,
    "delete_local_ip_port_association": PARENT_MEMBER,
}


class Pusher:
    """After a commit: tell every agent of associations made or gone."""

    def __init__(self, casts: Any) -> None:
        self.casts = casts

    def push(self, associations: list[dict[str, Any]], event_type: str) -> None:
        if associations and self.casts is not None and self.casts.enabled:
            self.casts.cast(topics.LOCAL_IP_PUSH, "push", fanout=True,
                            resource_type="LocalIPAssociation",
                            resource_list=associations, event_type=event_type)


class LocalIpPlugin(ServicePlugin):
    """Node-local virtual IPs (upstream's ``local_ip`` service plugin)."""

    service_type = "LOCAL_IP"
    supported_extension_aliases = ("local_ip",)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.local_ips = LocalIps(self)
        self.associations = PortAssociations(self)
        self.pusher = Pusher(None)
        errors.register_not_found("local_ip", lambda rid: errors.LocalIPNotFound(id=rid))
        errors.register_not_found("port_association", lambda rid, lip_id: (
            errors.LocalIPAssociationNotFound(local_ip_id=lip_id, port_id=rid)), child=True)

    def connect(self, core: Any) -> None:
        super().connect(core)
        self.pusher = Pusher(getattr(core, "casts", None))
        core.events.subscribe("ports", ev.PRECOMMIT_DELETE, self._port_deleting)

    def _port_deleting(self, conn: Connection, ctx: Context, port: dict[str, Any]) -> None:
        held = conn.execute(sa.select(t.local_ips.c.id).where(
            t.local_ips.c.local_port_id == port["id"]).limit(1)).first()
        if held is not None:
            raise errors.ServicePortInUse(port_id=port["id"],
                                          reason="still referenced by Local IPs")

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.local_ip.rpc import LocalIpPullEndpoint
        return {topics.RESOURCES_PULL: [LocalIpPullEndpoint(self.db)]}

    def collections(self) -> dict[str, Any]:
        return {"local_ips": self.local_ips, "port_associations": self.associations}

    def extensions(self) -> list[ApiExtension]:
        rules = [policy.RuleDefault(name, check, scope_types=["project"])
                 for name, check in POLICIES.items()]
        return [ApiExtension(descriptor=res.LOCAL_IP_EXT,
                             resources=[res.LOCAL_IP, res.PORT_ASSOCIATION], policies=rules)]
