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
        self._keys: dict[str, tuple[str, ...] | None] = {}
        self._rules_obj: Any = None
        self.refresh()

    def register(self, rules: list[policy.RuleDefault]) -> None:
        """Add the default rules of a plugin or extension."""
        self.enforcer.register_defaults(rules)
        self._names = frozenset()
        self.refresh()

    def refresh(self) -> None:
        """Pick up an edited policy file; called once per request.

        ``load_rules`` only stats the file when nothing changed, so the
        cost is one ``stat`` per request, and operators never restart.
        """
        self.enforcer.load_rules()
        names = frozenset(self.enforcer.rules) | frozenset(self.enforcer.registered_rules)
        if names != self._names or self.enforcer.rules is not self._rules_obj:
            self._names = names
            self._get_attr_rules = {}
            self._keys = {}
            self._rules_obj = self.enforcer.rules

    def check(self, ctx: Any, action: str, target: dict[str, Any]) -> bool:
        """Evaluate ``action``; results are memoised per request.

        A rule's outcome depends only on the caller and on the few target
        keys it mentions, so for a list of 1,000 ports the rules are
        evaluated once per distinct (owner, network owner, ...) and not once
        per row: oslo.policy's evaluation is far too slow for that.
        """
        if action not in self._names:
            return True
        keys = self._target_keys(action)
        cache = getattr(ctx, "policy_cache", None)
        memo_key = None
        if keys is not None and cache is not None:
            memo_key = (action, tuple(_hashable(target.get(k)) for k in keys))
            found = cache.get(memo_key)
            if found is not None:
                return found
        result = self._evaluate(action, target, ctx.policy_creds())
        if memo_key is not None:
            cache[memo_key] = result
        return result

    def _evaluate(self, action: str, target: dict[str, Any], creds: dict[str, Any]) -> bool:
        """Evaluate the parsed rule directly.

        ``Enforcer.enforce`` would reload the rules on every call; they are
        reloaded once per request in ``refresh`` instead. Token scope is
        checked here the way oslo.policy checks it (always, as its current
        releases do).
        """
        rule = self.enforcer.rules.get(action)
        if rule is None:
            rule = self.enforcer.rules.get("default")
            if rule is None:
                return False
        default = self.enforcer.registered_rules.get(action)
        scopes = getattr(default, "scope_types", None)
        token_scope = "system" if creds.get("system_scope") else "project"
        if scopes and token_scope not in scopes:
            return False
        return bool(rule(target, creds, self.enforcer, action))

    def _target_keys(self, action: str) -> tuple[str, ...] | None:
        """Target keys a rule reads, or None when that cannot be known."""
        if action not in self._keys:
            found = _keys_of(self.enforcer.rules.get(action), self.enforcer.rules, set())
            self._keys[action] = None if found is None else tuple(sorted(found))
        return self._keys[action]

    def enforce(self, ctx: Any, action: str, target: dict[str, Any]) -> None:
        if not self.check(ctx, action, target):
            raise errors.PolicyNotAuthorized(action=action)

    def enforce_attributes(self, ctx: Any, verb: str, singular: str,
                           body: dict[str, Any], target: dict[str, Any]) -> None:
        """Check ``<verb>_<resource>:<attr>`` rules, and ``:<attr>:<key>`` ones for
        the keys of a dict value or of the dicts in a list value."""
        action = f"{verb}_{singular}"
        for key, value in body.items():
            rule = f"{action}:{key}"
            names = [rule] if rule in self._names else []
            if isinstance(value, list):
                subs = sorted({k for item in value if isinstance(item, dict) for k in item})
            elif isinstance(value, dict):
                # ``update_router:external_gateway_info:enable_snat``: every
                # key given is checked, whatever its value, as upstream.
                subs = sorted(value)
            else:
                subs = []
            names += [f"{rule}:{sub}" for sub in subs if f"{rule}:{sub}" in self._names]
            for name in names:
                if not self.check(ctx, name, target):
                    # Upstream names the action and the attribute rule together.
                    raise errors.PolicyNotAuthorized(message=f"(rule:{action} and "
                                                     f"rule:{name}) is disallowed by policy")

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

    def view(self, ctx: Any, singular: str, target: dict[str, Any]) -> tuple[bool, frozenset[str]]:
        """Whether the caller sees ``target`` at all, and which attributes not.

        One memo lookup per row: the key is the values of every target key
        that the ``get_<resource>`` rules read, so a list of 1,000 rows
        with a handful of distinct owners evaluates the rules a handful of
        times.
        """
        keys = self._view_keys(singular)
        cache = getattr(ctx, "policy_cache", None)
        memo = None
        if keys is not None and cache is not None:
            memo = ("view", singular, tuple(_hashable(target.get(k)) for k in keys),
                    frozenset(a for _, a in self._attr_rules(singular) if a in target))
            found = cache.get(memo)
            if found is not None:
                return found
        result = (self.check(ctx, f"get_{singular}", target),
                  frozenset(self.hidden_attributes(ctx, singular, target)))
        if memo is not None:
            cache[memo] = result
        return result

    def _view_keys(self, singular: str) -> tuple[str, ...] | None:
        name = f"view:{singular}"
        if name not in self._keys:
            rules = [f"get_{singular}"] + [r for r, _ in self._attr_rules(singular)]
            union: set[str] = set()
            for rule in rules:
                keys = self._target_keys(rule) if rule in self._names else ()
                if keys is None:
                    union = None  # type: ignore[assignment]
                    break
                union |= set(keys)
            self._keys[name] = None if union is None else tuple(sorted(union))
        return self._keys[name]


_TEMPLATE = re.compile(r"%\((\w[\w:]*)\)s")


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


def _keys_of(check: Any, rules: Any, seen: set[str]) -> set[str] | None:
    """The target keys a check tree reads; None for checks we do not know."""
    if check is None or isinstance(check, (_checks.TrueCheck, _checks.FalseCheck,
                                           _checks.RoleCheck)):
        return set()
    if isinstance(check, (_checks.AndCheck, _checks.OrCheck)):
        out: set[str] = set()
        for sub in check.rules:
            found = _keys_of(sub, rules, seen)
            if found is None:
                return None
            out |= found
        return out
    if isinstance(check, _checks.NotCheck):
        return _keys_of(check.rule, rules, seen)
    if isinstance(check, _checks.RuleCheck):
        if check.match in seen:
            return set()
        return _keys_of(rules.get(check.match), rules, seen | {check.match})
    if isinstance(check, FieldCheck):
        return {check.field}
    if isinstance(check, _checks.GenericCheck):
        # ``kind`` names a credential; only the templated match reads the target.
        return set(_TEMPLATE.findall(check.match))
    return None
