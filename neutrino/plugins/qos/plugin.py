"""The ``qos`` service plugin: policies, their rules, and the rule types.

It serves ``/v2.0/qos/policies`` with the rules as sub-resources
(``/v2.0/qos/policies/{id}/bandwidth_limit_rules``, ...), the
``qos-rules-alias`` collections (a rule by id alone), and
``/v2.0/qos/rule-types``. Networks and ports get their ``qos_policy_id``
from the ML2 extension driver ``qos`` (``neutrino.plugins.ml2.ext_qos``).
Each operation is one transaction of the core plugin's kind (retried as a
whole on a lost race). Instances' ports hold Placement allocations made
from their policy's minimum rules: a change of the policy a port uses
changes the allocation (``placement_updates.py``), a change of those rules
under it is refused, as upstream.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

from oslo_policy import policy

from neutrino import errors
from neutrino.context import Context
from neutrino.plugins import store
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.plugins.placement.client import PlacementClient
from neutrino.plugins.qos import bindings
from neutrino.plugins.qos import policies as pol
from neutrino.plugins.qos.agent_rpc import PolicyPusher
from neutrino.plugins.qos.placement_updates import AllocationUpdates
from neutrino.plugins.qos.resource_request import ResourceRequests
from neutrino.plugins.qos.rules import Rules
from neutrino.plugins.qos.support import QosSupport
from neutrino.resources import qos
from neutrino.resources import rbac as rbac_res
from neutrino.rpc import topics

T = TypeVar("T")


_MANAGER = "(rule:admin_only) or (role:manager and project_id:%(project_id)s)"
_PARENT_READER = "(rule:admin_only) or (role:reader and rule:ext_parent_owner)"
_PARENT_MANAGER = "(rule:admin_only) or (role:manager and rule:ext_parent_owner)"
_READER = ("(rule:admin_only) or (role:reader and project_id:%(project_id)s) or "
           "rule:shared_qos_policy")


def _policies() -> list[policy.RuleDefault]:
    """Upstream's rule names and default strings for QoS."""
    rules = {"shared_qos_policy": "field:policies:shared=True",
             "get_policy": _READER, "get_policy:tags": _READER,
             "get_rule_type": "role:reader"}
    for verb in ("create", "update", "delete"):
        rules[f"{verb}_policy"] = rules[f"{verb}_policy:tags"] = _MANAGER
    for rtype in qos.RULE_TYPES.values():
        rules[f"get_policy_{rtype.singular}"] = _PARENT_READER
        for verb in ("create", "update", "delete"):
            rules[f"{verb}_policy_{rtype.singular}"] = _PARENT_MANAGER
    for name in qos.ALIASED:
        rtype = qos.RULE_TYPES[name]
        for verb, check in (("get", _PARENT_READER), ("update", _PARENT_MANAGER),
                            ("delete", _PARENT_MANAGER)):
            # Upstream points the minimum packet rate aliases at the policy rules.
            rules[f"{verb}_{rtype.alias_singular}"] = (
                f"rule:{verb}_policy_{rtype.singular}" if name == qos.MINIMUM_PACKET_RATE
                else check)
    scope = ["project"]
    return [policy.RuleDefault(n, c, scope_types=None if n == "shared_qos_policy" else scope)
            for n, c in rules.items()]


class QosPlugin(ServicePlugin):
    """Quality of Service: policies of bandwidth, DSCP and packet rate rules."""

    service_type = "QOS"
    supported_extension_aliases = tuple(
        d.alias for d in (*qos.DESCRIPTORS, *qos.RESOURCE_REQUEST_DESCRIPTORS))

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.support = QosSupport.from_conf(conf)
        self.policies = pol.Policies()
        self.rules = Rules(self.support)
        self.types = {r.plural: r for r in qos.RULE_TYPES.values()}
        self.aliases = {qos.RULE_TYPES[n].alias_plural: qos.RULE_TYPES[n] for n in qos.ALIASED}
        errors.register_not_found("policy", lambda rid: errors.QosPolicyNotFound(policy_id=rid))
        for rtype in qos.RULE_TYPES.values():
            errors.register_not_found(rtype.singular, _rule_not_found, child=True)
            errors.register_not_found(rtype.alias_singular, _rule_not_found, child=True)

    def connect(self, core: Any) -> None:
        super().connect(core)
        self.pusher = PolicyPusher(self.db, getattr(core, "casts", None))
        # Its session is made on first use: a server whose ports never
        # need it never reaches Placement.
        events = getattr(core, "events", None)
        if events is not None:
            AllocationUpdates(PlacementClient(self.conf)).subscribe(events)
        rbac_handler = core.handlers["rbac_policies"]
        rbac_handler.actions = {**rbac_handler.actions, pol.KIND: (rbac_res.ACCESS_AS_SHARED,)}

    def extensions(self) -> list[ApiExtension]:
        out = [ApiExtension(descriptor=qos.DESCRIPTORS[0],
                            resources=list(qos.RESOURCES), policies=_policies(),
                            attributes=qos.RBAC_QOS_POLICY)]
        out += [ApiExtension(descriptor=d) for d in qos.DESCRIPTORS[1:]]
        # Only admins see a port's resource request (upstream's policy).
        shown_to_admins = policy.RuleDefault("get_port:resource_request", "rule:admin_only",
                                             scope_types=["project"])
        out.append(ApiExtension(descriptor=qos.RESOURCE_REQUEST_DESCRIPTORS[0],
                                attributes=qos.RESOURCE_REQUEST,
                                attribute_handler=ResourceRequests(self.db),
                                policies=[shown_to_admins]))
        out += [ApiExtension(descriptor=d) for d in qos.RESOURCE_REQUEST_DESCRIPTORS[1:]]
        return out

    def collections(self) -> dict[str, Any]:
        plurals = [qos.POLICIES, "rule_types", *self.types, *self.aliases]
        return {plural: self for plural in plurals}

    # -- transactions ---------------------------------------------------------------

    def _write(self, fn: Callable[[Any], T]) -> T:
        return self.core.write(fn)

    def _read(self, fn: Callable[[Any], T]) -> T:
        with self.db.reader() as conn:
            return fn(conn)

    def _rtype(self, plural: str) -> qos.RuleType:
        return self.types.get(plural) or self.aliases[plural]

    # -- the collection interface ----------------------------------------------------

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if plural == qos.POLICIES:
            def make(conn: Any) -> list[dict[str, Any]]:
                ids = [self.policies.create(conn, ctx, item) for item in items]
                return self._policies_for(conn, ctx, ids)
            return self._write(make)
        if plural not in self.types:
            raise errors.MethodNotAllowed()
        rtype = self.types[plural]

        def make_rules(conn: Any) -> list[dict[str, Any]]:
            ids = [self.rules.create(conn, rtype, item) for item in items]
            made = [self.rules.get(conn, rtype, i) for i in ids]
            for policy_id in dict.fromkeys(r[qos.POLICY_KEY] for r in made):
                bindings.refuse_minimum_rule_change(conn, policy_id, rtype.name)
            return made
        made = self._write(make_rules)
        for policy_id in dict.fromkeys(r[qos.POLICY_KEY] for r in made):
            self.pusher.updated(policy_id)
        return made

    def _policies_for(self, conn: Any, ctx: Context | None, ids: list[str]) -> list[dict[str, Any]]:
        return [self.policies.get_for(conn, i, ctx) for i in ids]

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        if plural == qos.POLICIES:
            return self._read(lambda conn: self._policies_for(conn, ctx, [rid])[0])
        if plural == "rule_types":
            return self._rule_type(ctx, rid)
        rtype = self._rtype(plural)

        def load(conn: Any) -> dict[str, Any]:
            rule = self.rules.get(conn, rtype, rid)
            if plural in self.aliases:
                owner = self.policies.get_row(conn, rule[qos.POLICY_KEY]).project_id
                rule["ext_parent:project_id"] = owner
            return rule
        return self._read(load)

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        if plural == qos.POLICIES:
            def load(conn: Any) -> tuple[list[dict[str, Any]], bool]:
                items, more = self.policies.list(conn, ctx, query)
                return self.policies.present(conn, ctx, items), more
            return self._read(load)
        if plural == "rule_types":
            return _page_of_types(self._rule_types(query), query)
        if plural not in self.types:
            raise errors.MethodNotAllowed()
        return self._read(lambda conn: self.rules.list(conn, self.types[plural], query))

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        if plural == qos.POLICIES:
            def change(conn: Any) -> dict[str, Any]:
                self.policies.update(conn, ctx, rid, data, revision)
                return self._policies_for(conn, ctx, [rid])[0]
            return self._write(change)
        rtype = self._rtype(plural)

        def change_rule(conn: Any) -> dict[str, Any]:
            self.rules.update(conn, rtype, rid, data)
            rule = self.rules.get(conn, rtype, rid)
            bindings.refuse_minimum_rule_change(conn, rule[qos.POLICY_KEY], rtype.name)
            return rule
        rule = self._write(change_rule)
        self.pusher.updated(rule[qos.POLICY_KEY])
        return rule

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        if plural == qos.POLICIES:
            self._write(lambda conn: self.policies.delete(conn, rid, revision))
            self.pusher.deleted(rid)
            return
        rtype = self._rtype(plural)

        def remove(conn: Any) -> str:
            policy_id = self.rules.get(conn, rtype, rid)[qos.POLICY_KEY]
            self.rules.delete(conn, rtype, rid)
            bindings.refuse_minimum_rule_change(conn, policy_id, rtype.name)
            return str(policy_id)
        self.pusher.updated(self._write(remove))

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.qos.pull_rpc import ResourcesPullEndpoint
        return {topics.RESOURCES_PULL: [ResourcesPullEndpoint(self.db)]}

    def set_tags(self, ctx: Context, plural: str, rid: str, add: list[str] | None = None,
                 remove: list[str] | None = None, replace: list[str] | None = None) -> list[str]:
        def op(conn: Any) -> list[str]:
            self.policies.get_row(conn, rid, for_update=True)
            current = set(store.load_tags(conn, [rid])[rid])
            new = set(replace) if replace is not None else (current | set(add or []))
            if remove and not set(remove) <= current:
                raise errors.TagNotFound(tag=sorted(set(remove) - current)[0],
                                         resource="policy", resource_id=rid)
            new -= set(remove or [])
            if new != current:
                store.set_tags(conn, rid, new)
                store.bump(conn, pol.P, rid)
            return sorted(new)
        return self._write(op)

    # -- rule types ---------------------------------------------------------------------

    def _rule_types(self, query: store.ListQuery) -> list[dict[str, Any]]:
        flag = lambda key: any(query.filters.get(key) or [])  # noqa: E731
        names = self.support.rule_types(all_supported=flag("all_supported"),
                                        all_rules=flag("all_rules"))
        return [{"type": n} for n in names]

    def _rule_type(self, ctx: Context, name: str) -> dict[str, Any]:
        if not ctx.is_admin:
            raise errors.NotAuthorized()  # upstream: details are for admins only
        if name not in qos.RULE_TYPES:
            raise errors.ResourceNotFound()
        return {"type": name, "drivers": self.support.details(name)}


def _page_of_types(types: list[dict[str, Any]],
                   query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
    """A page of rule types, in the order the backends list them; a type
    names itself, so it is the marker (there is no ``id``)."""
    items = types[::-1] if query.page_reverse else list(types)
    if query.marker:
        names = [t["type"] for t in items]
        query.marker_found = query.marker in names
        items = items[names.index(query.marker) + 1:] if query.marker_found else []
    more = bool(query.limit) and len(items) > (query.limit or 0)
    if query.limit:
        items = items[:query.limit]
    return (items[::-1] if query.page_reverse else items), more


def _rule_not_found(rid: str, policy_id: str) -> errors.NeutronException:
    return errors.QosRuleNotFound(rule_id=rid, policy_id=policy_id)
