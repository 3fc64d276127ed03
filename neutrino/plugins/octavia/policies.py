"""Octavia's default policies, as it ships them with the keystone default
roles (``enforce_new_defaults``): ``admin`` administers and observes every
project, ``member`` of a project writes its objects, ``reader`` reads them.

An oslo.policy enforcer of its own: the rule names are Octavia's
(``os_load-balancer_api:<resource>:<action>``), apart from Neutron's.
"""
from __future__ import annotations

from typing import Any

from oslo_config import cfg
from oslo_policy import policy

from neutrino.context import Context
from neutrino.plugins.octavia import faults

API = "os_load-balancer_api"
READ, READ_GLOBAL, WRITE, ADMIN = ("rule:load-balancer:read", "rule:load-balancer:read-global",
                                   "rule:load-balancer:write", "rule:load-balancer:admin")
READ_QUOTA, READ_QUOTA_GLOBAL, WRITE_QUOTA = (
    "rule:load-balancer:read-quota", "rule:load-balancer:read-quota-global",
    "rule:load-balancer:write-quota")

BASE = {
    "project-member": "role:member and project_id:%(project_id)s",
    "project-reader": "role:reader and project_id:%(project_id)s",
    "context_is_admin": "role:admin",
    "load-balancer:admin": "is_admin:True or role:admin",
    "service": "role:service",
    "load-balancer:global_observer": "role:admin",
    "load-balancer:member_and_owner": "rule:project-member",
    "load-balancer:observer_and_owner": "rule:project-reader",
    "load-balancer:quota-admin": "role:admin",
    "load-balancer:read": ("rule:load-balancer:observer_and_owner or "
                           "rule:load-balancer:global_observer or "
                           "rule:load-balancer:member_and_owner or rule:load-balancer:admin"),
    "load-balancer:read-global": ("rule:load-balancer:global_observer or "
                                  "rule:load-balancer:admin"),
    "load-balancer:write": "rule:load-balancer:member_and_owner or rule:load-balancer:admin",
    "load-balancer:read-quota": ("rule:load-balancer:observer_and_owner or "
                                 "rule:load-balancer:global_observer or "
                                 "rule:load-balancer:member_and_owner or "
                                 "rule:load-balancer:quota-admin or rule:load-balancer:admin"),
    "load-balancer:read-quota-global": ("rule:load-balancer:global_observer or "
                                        "rule:load-balancer:quota-admin or "
                                        "rule:load-balancer:admin"),
    "load-balancer:write-quota": "rule:load-balancer:quota-admin or rule:load-balancer:admin",
}

_CRUD = {"get_all": READ, "get_all-global": READ_GLOBAL, "post": WRITE, "get_one": READ,
         "put": WRITE, "delete": WRITE}
_ADMIN_CRUD = {a: ADMIN for a in ("get_all", "post", "get_one", "put", "delete")}
PER_RESOURCE: dict[str, dict[str, str]] = {
    "loadbalancer": {**_CRUD, "get_stats": READ, "get_status": READ,
                     "put_failover": ADMIN},
    "listener": {**_CRUD, "get_stats": READ},
    "pool": dict(_CRUD),
    "member": {k: v for k, v in _CRUD.items() if k != "get_all-global"},
    "healthmonitor": dict(_CRUD),
    "l7policy": dict(_CRUD),
    "rule": {k: v for k, v in _CRUD.items() if k != "get_all-global"},
    "quota": {"get_all": READ_QUOTA, "get_all-global": READ_QUOTA_GLOBAL,
              "get_one": READ_QUOTA, "put": WRITE_QUOTA, "delete": WRITE_QUOTA,
              "get_defaults": READ_QUOTA},
    "provider": {"get_all": READ},
    "provider-flavor": {"get_all": ADMIN},
    "provider-availability-zone": {"get_all": ADMIN},
    "flavor": {**_ADMIN_CRUD, "get_all": READ, "get_one": READ},
    "flavor-profile": dict(_ADMIN_CRUD),
    "availability-zone": {**_ADMIN_CRUD, "get_all": READ, "get_one": READ},
    "availability-zone-profile": dict(_ADMIN_CRUD),
    "amphora": {a: ADMIN for a in ("get_all", "get_one", "delete", "put_config",
                                   "put_failover", "get_stats")},
}


def defaults() -> list[policy.RuleDefault]:
    rules = [policy.RuleDefault(name, check) for name, check in BASE.items()]
    for resource, actions in PER_RESOURCE.items():
        rules += [policy.RuleDefault(f"{API}:{resource}:{action}", check)
                  for action, check in actions.items()]
    return rules


class Enforcer:
    """Checks a caller against Octavia's rules; a refusal is Octavia's 403."""

    def __init__(self, conf: Any = None) -> None:
        self._enforcer = policy.Enforcer(conf if conf is not None else cfg.ConfigOpts(),
                                         use_conf=False)
        self._enforcer.register_defaults(defaults())
        self._enforcer.set_rules(policy.Rules.from_dict(
            {r.name: r.check_str for r in defaults()}), use_conf=False)

    def allowed(self, ctx: Context, resource: str, action: str,
                project_id: str | None) -> bool:
        creds = {"roles": [r.lower() for r in ctx.roles], "project_id": ctx.project_id,
                 "user_id": ctx.user_id, "is_admin": bool(ctx.is_admin)}
        target = {"project_id": project_id}
        return bool(self._enforcer.enforce(f"{API}:{resource}:{action}", target, creds))

    def authorize(self, ctx: Context, resource: str, action: str,
                  project_id: str | None) -> None:
        if not self.allowed(ctx, resource, action, project_id):
            raise faults.PolicyForbidden()
