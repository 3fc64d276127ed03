"""Context hook: who is calling, from identity headers; the request id."""
from __future__ import annotations

import uuid
from typing import Any

import falcon

from neutrino.context import Context, expand_roles


class ContextHook:
    """Builds the request context from identity headers.

    Behind keystonemiddleware the headers come from the validated token; in
    ``noauth`` mode they come from the caller, and a caller sending none is
    an admin, as upstream's noauth.
    """

    def __init__(self, api: Any) -> None:
        self.api = api

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.neutron = self.build(req)
        self.api.policy.refresh()

    def build(self, req: falcon.Request) -> Context:
        # Like oslo.middleware: our own id for this request; a caller's id
        # is kept as the global id that ties calls across services.
        request_id = "req-" + str(uuid.uuid4())
        global_id = req.get_header("X-Openstack-Request-Id")
        project = req.get_header("X-Project-Id") or req.get_header("X-Tenant-Id")
        user = req.get_header("X-User-Id")
        roles_header = req.get_header("X-Roles") or ""
        keystone = self.api.conf.auth_strategy == "keystone"
        if not keystone and not (project or user or roles_header):
            ctx = Context.admin()
            ctx.request_id, ctx.global_request_id = request_id, global_id
            return ctx
        roles = [r for r in roles_header.split(",") if r.strip()]
        roles = roles if keystone else expand_roles(roles)
        ctx = Context(user_id=user, project_id=project, roles=roles, request_id=request_id,
                      project_name=req.get_header("X-Project-Name"),
                      system_scope=req.get_header("OpenStack-System-Scope"),
                      global_request_id=global_id,
                      auth_token=req.get_header("X-Auth-Token") if keystone else None)
        ctx.is_admin = self.api.policy.check(ctx, "context_is_admin", {})
        return ctx

    def process_response(self, req: falcon.Request, resp: falcon.Response,
                         resource: Any, req_succeeded: bool) -> None:
        ctx = getattr(req.context, "neutron", None)
        if ctx is not None:
            resp.set_header("x-openstack-request-id", ctx.request_id)
