"""Authorization with oslo.policy: action checks and attribute checks.

The API asks three questions: may this caller do ``<action>`` on this
target; may they set these attributes (``create_network:shared``); which
attributes may they see (``get_network:provider:network_type``). Only rules
that exist for an attribute are consulted, so the attribute maps need no
policy bookkeeping of their own.
"""
from __future__ import annotations

import re
from typing import Any

from oslo_config import cfg
from oslo_policy import _checks, policy

from neutrino import errors
from neutrino.policy import defaults


@policy.register("field")
class FieldCheck(_checks.Check):
    """``field:<collection>:<attribute>=<value>`` (``=~`` for a regex)."""

    def __init__(self, kind: str, match: str) -> None:
        _resource, rest = match.split(":", 1)
        if "=~" in rest:
            self.field, value = rest.split("=~", 1)
            self.regex: re.Pattern[str] | None = re.compile(value)
            self.value = value
        else:
            self.field, self.value = rest.split("=", 1)
            self.regex = None
        super().__init__(kind, match)

    def __call__(self, target: dict[str, Any], creds: dict[str, Any],
                 enforcer: Any, current_rule: Any = None) -> bool:
        actual = target.get(self.field)
        if actual is None:
            return False
        if self.regex is not None:
            return bool(self.regex.match(str(actual)))
        if isinstance(actual, bool):
            return str(actual).lower() == self.value.lower()
        return str(actual) == self.value


class Policy:
    """The enforcer; one per process, reloaded when the policy file changes."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.enforcer = policy.Enforcer(conf)
        self.enforcer.register_defaults(defaults.rules())
        self._names: frozenset[str] = frozenset()
        self._get_attr_rules: dict[str, list[tuple[str, str]]] = {}
        self.refresh()

    def refresh(self) -> None:
        """Pick up an edited policy file; called once per request.

        ``load_rules`` only stats the file when nothing changed, so the
        cost is one ``stat`` per request, and operators never restart.
        """
        self.enforcer.load_rules()
        names = frozenset(self.enforcer.rules) | frozenset(self.enforcer.registered_rules)
        if names != self._names:
            self._names = names
            self._get_attr_rules = {}

    def check(self, ctx: Any, action: str, target: dict[str, Any]) -> bool:
        if action not in self._names:
            return True
        try:
            return bool(self.enforcer.enforce(action, target, ctx.policy_creds(),
                                              do_raise=False))
        except policy.InvalidScope:
            return False

    def enforce(self, ctx: Any, action: str, target: dict[str, Any]) -> None:
        if not self.check(ctx, action, target):
            raise errors.PolicyNotAuthorized(action=action)

    def enforce_attributes(self, ctx: Any, verb: str, singular: str,
                           body: dict[str, Any], target: dict[str, Any]) -> None:
        """Check ``<verb>_<resource>:<attr>`` (and ``:<attr>:<key>``) rules."""
        prefix = f"{verb}_{singular}:"
        for key, value in body.items():
            rule = prefix + key
            if rule in self._names:
                self.enforce(ctx, rule, target)
            if isinstance(value, list):
                for sub in {k for item in value if isinstance(item, dict) for k in item}:
                    if f"{rule}:{sub}" in self._names:
                        self.enforce(ctx, f"{rule}:{sub}", target)

    def _attr_rules(self, singular: str) -> list[tuple[str, str]]:
        found = self._get_attr_rules.get(singular)
        if found is None:
            prefix = f"get_{singular}:"
            found = [(r, r[len(prefix):]) for r in sorted(self._names)
                     if r.startswith(prefix)]
            self._get_attr_rules[singular] = found
        return found

    def hidden_attributes(self, ctx: Any, singular: str,
                          target: dict[str, Any]) -> list[str]:
        """Attributes of ``target`` the caller may not see."""
        return [attr for rule, attr in self._attr_rules(singular)
                if attr in target and not self.check(ctx, rule, target)]
