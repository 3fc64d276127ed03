"""Generic controllers: one set of handlers serves every resource.

The order of work in each handler is the request pipeline of the design:
context (already on ``req.context``) -> body validation -> ownership ->
policy -> plugin -> response shaping. Everything resource-specific comes
from the ``ResourceDef``; nothing here names a resource.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NoReturn

import falcon
import orjson

from neutrino import errors
from neutrino.api import query as query_mod
from neutrino.api.hooks import body as body_mod
from neutrino.api.hooks import quota as quota_hook
from neutrino.api.hooks.notifier import NotifierHook
from neutrino.api.hooks.ownership import check_ownership
from neutrino.api.hooks.policy import Shaper, Targets, not_found_for
from neutrino.context import Context
from neutrino.resources import validators as v
from neutrino.resources.attributes import UNSET, ResourceDef


@dataclass
class Api:
    """What every controller needs: configuration, plugins, policy.

    ``plugin`` is the core plugin; ``owners`` maps the collections of
    service plugins and extensions to the object serving them.
    """

    conf: Any
    plugin: Any
    policy: Any
    resources: dict[str, ResourceDef]
    aliases: list[str] = field(default_factory=list)
    owners: dict[str, Any] = field(default_factory=dict)
    attribute_handlers: dict[str, list[Any]] = field(default_factory=dict)
    actions: dict[tuple[str, str], Any] = field(default_factory=dict)
    request_hooks: list[Any] = field(default_factory=list)
    routes: list[Any] = field(default_factory=list)  # extensions' ``CustomRoute``s
    notifier: NotifierHook = field(default_factory=NotifierHook)
    directory: Any = None  # the loaded plugins (``plugins.directory.Directory``)

    def plugin_for(self, plural: str) -> Any:
        return self.owners.get(plural, self.plugin)

    def reads_together(self) -> Any:
        """One read transaction for a request's lookups, opened by the plugin layer."""
        return self.plugin.reads_together()

    def extend(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> None:
        for handler in self.attribute_handlers.get(plural, ()):
            handler.extend(ctx, plural, items)

    def hooks_request(self, ctx: Context, method: str, plural: str, body: Any) -> None:
        for hook in self.request_hooks:
            hook.on_request(ctx, method, plural, body)

    def hooks_response(self, ctx: Context, method: str, plural: str, payload: Any) -> None:
        for hook in self.request_hooks:
            hook.on_response(ctx, method, plural, payload)


def within_parent(api: Api, rdef: ResourceDef, ctx: Context, targets: Targets,
                  pid: str | None) -> bool:
    """For a sub-resource: check the parent exists and the caller may see it.

    A parent the caller may not see is "not found", like any resource; the
    parent also becomes the owner policy reads for children that have none
    of their own (a QoS rule belongs to its policy's project).
    """
    if rdef.parent is None or pid is None:
        return False
    prdef = api.resources[rdef.parent]
    if rdef.quiet_parent:
        targets.parent = _parent_as_admin(api, prdef, pid) or {"project_id": None}
        return True
    parent = api.plugin_for(prdef.plural).get(ctx, prdef.plural, pid)
    if not api.policy.check(ctx, f"get_{prdef.policy_singular}", targets.of(parent)):
        raise not_found_for(prdef, pid)
    targets.parent = parent
    return True


def _parent_as_admin(api: Api, prdef: ResourceDef, pid: str) -> dict[str, Any] | None:
    try:
        parent: dict[str, Any] = api.plugin_for(prdef.plural).get(Context.admin(),
                                                                  prdef.plural, pid)
    except errors.NotFound:
        return None
    return parent


def creating_within(api: Api, rdef: ResourceDef, ctx: Context, targets: Targets,
                    pid: str | None) -> dict[str, Any] | None:
    """For a sub-resource's create: its parent as it stands, whoever may
    see it, since upstream's create rules read the parent's owner with an
    admin's eyes (``ext_parent:project_id``); so another project's parent
    is 403 whether or not the caller sees it. None when it does not exist
    (``refuse_missing_parent`` then answers)."""
    if rdef.parent is None or pid is None:
        return None
    parent = _parent_as_admin(api, api.resources[rdef.parent], pid)
    if parent is not None:
        targets.parent = parent
    return parent


def refuse_missing_parent(api: Api, rdef: ResourceDef, ctx: Context, data: dict[str, Any],
                          pid: str) -> NoReturn:
    """A parent that does not exist: upstream's rule fails before it looks
    the parent up (403) unless the caller's role would do on its own
    parent, and then the lookup's 404 answers."""
    own = Targets(api.plugin, ctx)
    own.parent = {"project_id": ctx.project_id}
    api.policy.enforce(ctx, f"create_{rdef.policy_singular}", own.of(data))
    raise not_found_for(api.resources[rdef.parent or ""], pid)


def send(resp: falcon.Response, status: int, payload: Any = None) -> None:
    resp.status = status
    if payload is None:
        resp.data = b""
        resp.content_type = None
    else:
        try:
            resp.data = orjson.dumps(payload)
        except orjson.JSONEncodeError:
            # Integers beyond 64 bits (an IPv6 network's address count):
            # the standard library writes them exactly, as upstream does.
            resp.data = json.dumps(payload, separators=(",", ":")).encode()
        resp.content_type = "application/json"


def checked(rdef: ResourceDef, data: dict[str, Any]) -> dict[str, Any]:
    """The given attributes whose ``<action>:<attribute>`` rules apply."""
    unchecked = [k for k in data if k in rdef.attributes and rdef.attributes[k].policy_unchecked]
    return {k: val for k, val in data.items() if k not in unchecked} if unchecked else data


def params_of(req: falcon.Request) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in req.params.items():
        out[key] = value if isinstance(value, list) else [value]
    return out


def revision_of(req: falcon.Request) -> int | None:
    """The revision an ``If-Match: revision_number=N`` etag requires.

    As upstream: other etags are ignored, two revision etags or one that is
    no integer are a bad request; beyond that, a revision its column cannot
    hold is refused before it reaches SQL.
    """
    header = req.get_header("If-Match")
    etags = [_etag(e) for e in header.split(",")] if header else []
    wanted = [e.split("=", 1)[1] for e in etags if e.startswith("revision_number=")]
    if not wanted:
        return None
    if len(wanted) > 1:
        raise errors.BadRequest(resource="if-match",
                                msg="Multiple revision_number etags are not supported.")
    try:
        number = int(wanted[0])
    except ValueError:
        raise errors.BadRequest(resource="if-match",
                                msg="Revision number etag must be in the format of "
                                    "revision_number=<int>") from None
    if not v.INT32[0] <= number <= v.INT32[1]:
        raise errors.InvalidInput(error_message=f"Revision number {wanted[0]} is "
                                                f"out of range")
    return number


def _etag(text: str) -> str:
    text = text.strip().removeprefix("W/")
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] == '"' else text


def base_url(req: falcon.Request) -> str:
    return req.prefix.rstrip("/")


class Collection:
    """``/v2.0/<plural>``: list and create."""

    def __init__(self, api: Api, rdef: ResourceDef) -> None:
        self.api, self.rdef = api, rdef

    def on_get(self, req: falcon.Request, resp: falcon.Response, pid: str | None = None) -> None:
        ctx: Context = req.context.neutron
        params = params_of(req)
        q = query_mod.parse(self.rdef, params, self.api.conf.pagination_max_limit)
        q.answer = True
        targets = Targets(self.api.plugin, ctx)
        try:
            if within_parent(self.api, self.rdef, ctx, targets, pid):
                q.filters[self.rdef.parent_key] = [pid]
        except errors.NotFound:
            if not self.rdef.lists_unseen_parent:
                raise
            # none the caller may see (upstream does not look the parent up)
            send(resp, 200, {self.rdef.plural: []})
            return
        shaper = Shaper(self.api, self.rdef, ctx, targets)
        with self.api.reads_together():
            items, _more = self.api.plugin_for(self.rdef.plural).list(ctx, self.rdef.plural, q)
            if q.marker and not q.marker_found:
                self._check_marker(ctx, q.marker)
            shaper.prefetch(items)
            kept = [i for i in items if shaper.visible(i)]
            # The page itself, when nothing was hidden, carries the query
            # that selected it, for the attribute handlers' child reads.
            items = items if len(kept) == len(items) else kept
            self.api.extend(ctx, self.rdef.plural, items)
        payload: dict[str, Any] = {self.rdef.plural: [shaper.shape(i, q.fields) for i in items]}
        page_links = query_mod.links(base_url(req), params, self.rdef.url_plural, items, q,
                                     self.rdef.primary_key)
        if page_links:
            payload[f"{self.rdef.plural}_links"] = page_links
        self.api.hooks_response(ctx, "GET", self.rdef.plural, payload)
        send(resp, 200, payload)

    def _check_marker(self, ctx: Context, marker: str) -> None:
        """An unknown marker is 404, as upstream (who looks it up first)."""
        try:
            self.api.plugin_for(self.rdef.plural).get(ctx, self.rdef.plural, marker)
        except errors.NotFound:
            raise not_found_for(self.rdef, marker) from None

    def on_post(self, req: falcon.Request, resp: falcon.Response, pid: str | None = None) -> None:
        ctx: Context = req.context.neutron
        raw = body_mod.parse_json(req.bounded_stream.read())
        self.api.hooks_request(ctx, "POST", self.rdef.plural, raw)
        items, bulk = body_mod.items_of(self.rdef, raw)
        targets = Targets(self.api.plugin, ctx)
        under_parent = self.rdef.parent is not None and pid is not None
        parent = creating_within(self.api, self.rdef, ctx, targets, pid)
        prepared = []
        for item in items:
            data = body_mod.for_create(self.rdef, ctx, item, self.api.conf.noauth_project_id
                                       if self.api.conf.auth_strategy == "noauth" else None)
            if under_parent:
                data[self.rdef.parent_key] = pid
                if parent is None:
                    refuse_missing_parent(self.api, self.rdef, ctx, data, pid or "")
            self._authorize_create(ctx, item, data, targets)
            prepared.append(data)
        if under_parent:
            # Allowed on the parent, the caller must also see it (404).
            within_parent(self.api, self.rdef, ctx, targets, pid)
        quota_hook.reserve(ctx, self.rdef.singular, prepared)
        self.api.notifier.create_start(ctx, self.rdef.singular, raw)
        created = self.api.plugin_for(self.rdef.plural).create(ctx, self.rdef.plural, prepared)
        for data, result in zip(prepared, created):
            for handler in self.api.attribute_handlers.get(self.rdef.plural, ()):
                handler.process(ctx, self.rdef.plural, data, result, creating=True)
        shaper = Shaper(self.api, self.rdef, ctx, targets)
        shaped = [shaper.shape(c, None) for c in created]
        payload = {self.rdef.plural: shaped} if bulk else {self.rdef.singular: shaped[0]}
        self.api.hooks_response(ctx, "POST", self.rdef.plural, payload)
        self.api.notifier.create_end(ctx, self.rdef.singular, shaped)
        send(resp, 201, payload)

    def _authorize_create(self, ctx: Context, item: dict[str, Any], data: dict[str, Any],
                          targets: Targets) -> None:
        net_id = data.get("network_id")
        if net_id and "network_id" in self.rdef.attributes and targets.network(net_id) is None:
            raise errors.NetworkNotFound(net_id=net_id)
        check_ownership(self.api, self.rdef, ctx, data, targets)
        target = targets.of(data)
        self.api.policy.enforce(ctx, f"create_{self.rdef.policy_singular}", target)
        explicit = checked(self.rdef, body_mod.explicit_non_defaults(self.rdef, item, data))
        self.api.policy.enforce_attributes(ctx, "create", self.rdef.policy_singular, explicit, target)


class Member:
    """``/v2.0/<plural>/{id}``: show, update, delete."""

    def __init__(self, api: Api, rdef: ResourceDef) -> None:
        self.api, self.rdef = api, rdef

    def _visible(self, ctx: Context, rid: str, targets: Targets,
                 pid: str | None = None) -> dict[str, Any]:
        return self._find(ctx, rid, targets, pid)[0]

    def _scope(self, pid: str | None) -> dict[str, Any]:
        """The parent a child's id is unique within (``scoped_by_parent``), for
        the collection that keys its items so."""
        return {"parent_id": pid} if self.rdef.scoped_by_parent and pid else {}

    def _seen(self, item: dict[str, Any], extra: set[str]) -> dict[str, Any]:
        """The core plugin's keyword for what this request read of the item
        (its attributes, without the API extensions' ``extra``): an update
        or delete whose row still has that revision need not read it again
        (``CorePlugin._as_seen``). Other plugins read for themselves."""
        if self.api.plugin_for(self.rdef.plural) is not self.api.plugin:
            return {}
        return {"seen": {k: val for k, val in item.items() if k not in extra}}

    def _find(self, ctx: Context, rid: str, targets: Targets,
              pid: str | None = None) -> tuple[dict[str, Any], Shaper]:
        """The item the caller may see, and the shaper that decided it."""
        with self.api.reads_together():
            return self._find_in(ctx, rid, targets, pid)

    def _find_in(self, ctx: Context, rid: str, targets: Targets,
                 pid: str | None) -> tuple[dict[str, Any], Shaper]:
        under_parent = within_parent(self.api, self.rdef, ctx, targets, pid)
        try:
            item = self.api.plugin_for(self.rdef.plural).get(ctx, self.rdef.plural, rid,
                                                             **self._scope(pid))
        except errors.NotFound:
            if not under_parent:
                raise
            raise not_found_for(self.rdef, rid, pid) from None
        if under_parent and item.get(self.rdef.parent_key) != pid:
            raise not_found_for(self.rdef, rid, pid)
        # The shaper's view of ``get_<resource>`` builds the full target (the
        # network's owner and sharing: one more read) only when the caller's
        # rules still depend on it; an admin's never do.
        # (built after ``within_parent``: a parent's owner is part of the target)
        shaper = Shaper(self.api, self.rdef, ctx, targets)
        if not shaper.visible(item):
            if self.rdef.quiet_parent:
                raise errors.HTTPNotFound()
            raise not_found_for(self.rdef, rid, pid)
        self.api.extend(ctx, self.rdef.plural, [item])
        return item, shaper

    def on_get(self, req: falcon.Request, resp: falcon.Response, rid: str,
               pid: str | None = None) -> None:
        ctx: Context = req.context.neutron
        targets = Targets(self.api.plugin, ctx)
        ctx.fields = [f for f in params_of(req).get("fields", []) if f] or None
        item, shaper = self._find(ctx, rid, targets, pid)
        fields = ctx.fields
        payload = {self.rdef.singular: shaper.shape(item, fields)}
        self.api.hooks_response(ctx, "GET", self.rdef.plural, payload)
        send(resp, 200, payload)

    def on_put(self, req: falcon.Request, resp: falcon.Response, rid: str,
               pid: str | None = None) -> None:
        ctx: Context = req.context.neutron
        raw = body_mod.parse_json(req.bounded_stream.read())
        self.api.hooks_request(ctx, "PUT", self.rdef.plural, raw)
        data = body_mod.for_update(self.rdef, raw)
        revision = revision_of(req)
        targets = Targets(self.api.plugin, ctx)
        policy, singular = self.api.policy, self.rdef.policy_singular
        with self.api.reads_together():
            original = self._visible(ctx, rid, targets, pid)
            current = targets.for_rules(policy, [f"update_{singular}"], original)
            target = targets.for_rules(
                policy, policy.attribute_rules("update", singular, checked(self.rdef, data)),
                {**original, **data})
        if not policy.check(ctx, f"update_{singular}", current):
            self._refused_update(ctx, targets, original, data)
        policy.enforce_attributes(ctx, "update", singular, checked(self.rdef, data), target)
        extra = {k for h in self.api.attribute_handlers.get(self.rdef.plural, ())
                 for k in h.attribute_names}
        core_data = {k: val for k, val in data.items() if k not in extra}
        for handler in self.api.attribute_handlers.get(self.rdef.plural, ()):
            handler.check_update(ctx, self.rdef.plural, rid, data)
        self.api.notifier.update_start(ctx, self.rdef.singular, rid, raw)
        updated = self.api.plugin_for(self.rdef.plural).update(
            ctx, self.rdef.plural, rid, core_data, revision,
            **self._seen(original, extra))
        for handler in self.api.attribute_handlers.get(self.rdef.plural, ()):
            handler.process(ctx, self.rdef.plural, data, updated, creating=False)
        self.api.extend(ctx, self.rdef.plural, [updated])
        shaper = Shaper(self.api, self.rdef, ctx, targets)
        payload = {self.rdef.singular: shaper.shape(updated, None)}
        self.api.hooks_response(ctx, "PUT", self.rdef.plural, payload)
        self.api.notifier.update_end(ctx, self.rdef.singular, payload[self.rdef.singular])
        send(resp, 200, payload)

    def _refused_update(self, ctx: Context, targets: Targets, original: dict[str, Any],
                        data: dict[str, Any]) -> None:
        """An update the policy refuses: 403 when the caller's ``get_``
        rule passes on the item, else 404, as upstream (which pretends the
        resource does not exist rather than say it is there: an address
        group shared with the caller's project, say, whose ``shared`` rule
        has no attribute to read)."""
        policy, singular = self.api.policy, self.rdef.policy_singular
        # Upstream reads the item for an update with only the attributes
        # policy needs or that have no default (so a QoS policy's
        # ``shared``, which has one, is not there), never the hidden ones
        # (an address group's per caller ``shared``), and the request's.
        attrs = self.rdef.attributes

        def read(name: str) -> bool:
            a = attrs.get(name)
            return a is None or a.required_by_policy or (a.is_visible and a.default is UNSET)
        item = {**{k: val for k, val in original.items() if read(k)}, **data}
        with self.api.reads_together():
            shown = targets.for_rules(policy, [f"get_{singular}"], item)
        if not policy.check(ctx, f"get_{singular}", shown):
            raise falcon.HTTPNotFound()
        raise errors.PolicyNotAuthorized(action=f"update_{singular}")

    def on_delete(self, req: falcon.Request, resp: falcon.Response, rid: str,
               pid: str | None = None) -> None:
        ctx: Context = req.context.neutron
        revision = revision_of(req)
        targets = Targets(self.api.plugin, ctx)
        action = f"delete_{self.rdef.policy_singular}"
        with self.api.reads_together():
            original = self._visible(ctx, rid, targets, pid)
            target = targets.for_rules(self.api.policy, [action], original)
        self.api.policy.enforce(ctx, action, target)
        self.api.notifier.delete_start(ctx, self.rdef.singular, rid)
        extra = {k for h in self.api.attribute_handlers.get(self.rdef.plural, ())
                 for k in h.attribute_names}
        self.api.plugin_for(self.rdef.plural).delete(ctx, self.rdef.plural, rid, revision,
                                                     **self._scope(pid),
                                                     **self._seen(original, extra))
        for handler in self.api.attribute_handlers.get(self.rdef.plural, ()):
            handler.delete(ctx, self.rdef.plural, rid)
        self.api.notifier.delete_end(ctx, self.rdef.singular, rid, original)
        send(resp, 204)


class Action:
    """``PUT|GET /v2.0/<plural>/{id}/<action>`` (``add_prefixes``, ``get_subports``).

    The method is the one the resource declares for the action
    (``ResourceDef.actions``); another method is 405, as upstream. A GET
    action has no body and the handler receives ``None``.
    """

    def __init__(self, api: Api, rdef: ResourceDef, name: str) -> None:
        self.api, self.rdef, self.name = api, rdef, name
        self.method = rdef.actions.get(name, "PUT").upper()
        self.member = Member(api, rdef)

    def on_put(self, req: falcon.Request, resp: falcon.Response, rid: str,
               pid: str | None = None) -> None:
        self._run(req, resp, rid, "PUT", pid)

    def on_get(self, req: falcon.Request, resp: falcon.Response, rid: str,
               pid: str | None = None) -> None:
        self._run(req, resp, rid, "GET", pid)

    def _run(self, req: falcon.Request, resp: falcon.Response, rid: str, method: str,
             pid: str | None) -> None:
        if method != self.method:
            raise falcon.HTTPMethodNotAllowed([self.method])
        ctx: Context = req.context.neutron
        raw = body_mod.parse_json(req.bounded_stream.read()) if method == "PUT" else None
        targets = Targets(self.api.plugin, ctx)
        with self.api.reads_together():
            original = self.member._visible(ctx, rid, targets, pid)
            target = targets.for_rules(self.api.policy, [self.name], original)
        self.api.policy.enforce(ctx, self.name, target)
        handler = self.api.actions.get((self.rdef.plural, self.name))
        if handler is not None:
            answer = handler(ctx, rid, raw)
        else:
            answer = self.api.plugin_for(self.rdef.plural).action(
                ctx, self.rdef.plural, rid, self.name, raw)
        if answer is None:
            # An action with nothing to say answers JSON ``null``, as upstream's
            # (BGP's ``remove_bgp_peer``); clients parse the body.
            resp.status, resp.data, resp.content_type = 200, b"null", "application/json"
            return
        send(resp, 200, answer)
