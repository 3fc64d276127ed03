"""Policy hook: the targets rules are checked against, and what callers see.

The action checks themselves (``create_network``, ``update_port:mac_address``)
are one call each in the controllers; what needs a home is building the
target a rule reads (the resource plus its network's owner and sharing, as
the caller sees it) and filtering results: rows the caller may not see, and
attributes it may not read.
"""
from __future__ import annotations

from typing import Any

from neutrino import errors
from neutrino.context import Context
from neutrino.resources.attributes import ResourceDef


class Targets:
    """Policy targets: the resource plus its network's owner and sharing.

    Sharing is per caller (RBAC entries for ``*`` or the caller's project),
    so targets are built for one request's context.
    """

    def __init__(self, plugin: Any, ctx: Context | None = None) -> None:
        self.plugin = plugin
        self.ctx = ctx
        self._networks: dict[str, dict[str, Any] | None] = {}
        self.parent: dict[str, Any] | None = None  # of a sub-resource request
        self._group_owners: dict[str, str | None] = {}

    def network(self, net_id: str) -> dict[str, Any] | None:
        """Owner and sharing of a network, fetched once per request."""
        if net_id not in self._networks:
            self._networks[net_id] = self.plugin.network_of(net_id, self.ctx)
        return self._networks[net_id]

    def group_owner(self, group_id: str) -> str | None:
        """Owner of a security group (``rule:sg_owner`` of its rules); a group
        that does not exist is upstream's 404, whoever asks."""
        if group_id not in self._group_owners:
            self._group_owners.update(self.plugin.security_group_owners([group_id]))
        owner = self._group_owners.get(group_id)
        if owner is None:
            raise errors.SecurityGroupNotFound(id=group_id)
        return owner

    def prefetch(self, items: list[dict[str, Any]]) -> None:
        """Load the networks (and security groups) of a whole list in one
        query each, not one per row."""
        groups = [i["security_group_id"] for i in items
                  if i.get("security_group_id") and i["security_group_id"] not in self._group_owners]
        if groups:
            self._group_owners.update(self.plugin.security_group_owners(groups))
        wanted = [i["network_id"] for i in items
                  if i.get("network_id") and i["network_id"] not in self._networks]
        if wanted:
            found = self.plugin.networks_of(wanted, self.ctx)
            for net_id in wanted:
                self._networks[net_id] = found.get(net_id)

    def reads_added(self, keys: tuple[str, ...] | None) -> bool:
        """Whether rules still reading ``keys`` (a caller's plan) read what
        ``of`` adds: the network's owner and sharing, a group's or a
        parent's owner (a parent also fills in the item's own owner)."""
        return (keys is None or self.parent is not None
                or any(":" in k or k == "shared" for k in keys))

    def for_rules(self, policy: Any, actions: list[str], item: dict[str, Any]) -> dict[str, Any]:
        """The target to check ``actions`` on ``item`` (which exists) with:
        ``of(item)`` when this caller's rules read what it adds, else the
        item itself, sparing the network's read (an admin's rules never
        read it)."""
        if self.ctx is None:
            return self.of(item)
        for action in actions:
            value, keys = policy.plan(self.ctx, action)
            if value is None and self.reads_added(keys):
                return self.of(item)
        return item

    def of(self, item: dict[str, Any]) -> dict[str, Any]:
        if self.parent is not None:
            # Upstream's rules on sub-resources read the parent's owner as
            # ``ext_parent:project_id`` (``rule:ext_parent_owner``).
            owner = self.parent.get("project_id")
            item = {**item, "ext_parent:project_id": owner, "ext_parent:tenant_id": owner}
            if item.get("project_id") is None:
                item.update(project_id=owner, tenant_id=owner)
        group_id = item.get("security_group_id")
        if group_id and isinstance(group_id, str):
            owner = self.group_owner(group_id)
            item = {**item, "security_group:project_id": owner,
                    "security_group:tenant_id": owner}
        net_id = item.get("network_id")
        if not net_id:
            return item
        net = self.network(net_id)
        target = dict(item)
        if net is not None:
            target["network:project_id"] = target["network:tenant_id"] = net["project_id"]
            target.setdefault("shared", net["shared"])
            # ``rule:external_network`` (get_subnet) reads it from the
            # target: the network's flag only where the caller sees the
            # network (``networks_of``), never the subnet's shown flag.
            target["router:external"] = net.get("router:external", False)
        return target


def not_found_for(rdef: ResourceDef, rid: str,
                  parent_id: str | None = None) -> errors.NeutronException:
    return errors.not_found(rdef.singular, rid, parent_id)


class Shaper:
    """Response shaping: hide what policy hides, keep what ``fields`` asks."""

    def __init__(self, api: Any, rdef: ResourceDef, ctx: Context, targets: Targets) -> None:
        self.api, self.rdef, self.ctx, self.targets = api, rdef, ctx, targets
        self.invisible = frozenset(n for n, a in rdef.attributes.items() if not a.is_visible)
        self.view = api.policy.view(ctx, rdef.policy_singular)
        # The row alone decides unless the rules read what ``Targets.of``
        # adds: then every row needs its full target (an admin's rows never do).
        self.needs_target = targets.reads_added(self.view.keys)
        self._hidden: dict[frozenset[str], frozenset[str]] = {}

    def prefetch(self, items: list[dict[str, Any]]) -> None:
        """Load what the targets of a whole list need, when they need it."""
        if self.needs_target:
            self.targets.prefetch(items)

    def _decide(self, item: dict[str, Any]) -> tuple[bool, frozenset[str]]:
        return self.view(self.targets.of(item) if self.needs_target else item)

    def visible(self, item: dict[str, Any]) -> bool:
        return self._decide(item)[0]

    def shape(self, item: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
        hidden = self._decide(item)[1]
        both = self._hidden.get(hidden)
        if both is None:
            both = self._hidden[hidden] = hidden | self.invisible
        if fields:
            return {k: item[k] for k in fields if k in item and k not in both}
        if not both or both.isdisjoint(item):
            return item
        return {k: val for k, val in item.items() if k not in both}
