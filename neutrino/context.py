"""Who is asking: the request context every layer receives."""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

# Keystone's default role implications; noauth callers get them expanded the
# same way so that policy sees what it would see behind Keystone.
IMPLIED_ROLES = {"admin": ("manager", "member", "reader"), "manager": ("member", "reader"),
                 "member": ("reader",)}


def expand_roles(roles: list[str]) -> list[str]:
    out: list[str] = []
    pending = [r.strip() for r in roles if r.strip()]
    while pending:
        role = pending.pop(0)
        if role.lower() in (r.lower() for r in out):
            continue
        out.append(role)
        pending.extend(IMPLIED_ROLES.get(role.lower(), ()))
    return out


@dataclass
class Context:
    user_id: str | None = None
    project_id: str | None = None
    roles: list[str] = field(default_factory=list)
    is_admin: bool = False
    request_id: str = field(default_factory=lambda: "req-" + str(uuid.uuid4()))
    project_name: str | None = None
    system_scope: str | None = None
    global_request_id: str | None = None
    # The caller's Keystone token (behind keystonemiddleware): what a service
    # called on the caller's behalf is asked with (Barbican's ACLs).
    auth_token: str | None = field(default=None, repr=False)
    # Policy results for this request, keyed by rule and the target values
    # the rule reads (see policy.engine.Policy.check).
    policy_cache: dict[Any, bool] = field(default_factory=dict, repr=False)
    # What a create would add, per project and resource (the quota hook).
    quota_request: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)
    # ``fields=`` of a show, for the plugins that read them (upstream hands
    # them to ``get_<resource>``: auto-allocated-topology's ``dry-run``).
    # A plugin that applied them itself sets this to None.
    fields: list[str] | None = field(default=None, repr=False)

    @property
    def tenant_id(self) -> str | None:
        return self.project_id

    @property
    def is_advsvc(self) -> bool:
        return "advsvc" in (r.lower() for r in self.roles)

    def policy_creds(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "project_id": self.project_id,
                "tenant_id": self.project_id, "roles": [r.lower() for r in self.roles],
                "is_admin": self.is_admin, "system_scope": self.system_scope,
                "project_name": self.project_name}

    def policy_key(self) -> tuple[Any, ...]:
        """``policy_creds`` as a tuple, built directly: the key of a caller's
        memoised policy plans, asked for several times a request."""
        return (self.user_id, self.project_id, tuple([r.lower() for r in self.roles]),
                self.is_admin, self.system_scope, self.project_name)

    @classmethod
    def admin(cls) -> "Context":
        return cls(user_id=None, project_id=None, roles=["admin", "member", "reader"],
                   is_admin=True)
