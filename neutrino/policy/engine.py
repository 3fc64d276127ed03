"""Authorization with oslo.policy: action checks and attribute checks.

The API asks three questions: may this caller do ``<action>`` on this
target; may they set these attributes (``create_network:shared``); which
attributes may they see (``get_network:provider:network_type``). Only rules
that exist for an attribute are consulted, so the attribute maps need no
policy bookkeeping of their own.
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, MutableMapping
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

    def __call__(self, target: Mapping[str, Any], creds: MutableMapping[str, Any],
                 enforcer: policy.Enforcer, current_rule: str | None = None) -> bool:
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
        self._plans: dict[Any, tuple[bool | None, tuple[str, ...] | None]] = {}
        self._generation = 0
        self._rules_obj: Any = None
        self._files: tuple[Any, ...] | None = None
        self._found: dict[str, tuple[str | None, float]] = {}
        self.refresh()

    def register(self, rules: list[policy.RuleDefault]) -> None:
        """Add the default rules of a plugin or extension."""
        self.enforcer.register_defaults(rules)
        self._names = frozenset()
        self._files = None
        self.refresh()

    def refresh(self) -> None:
        """Pick up an edited policy file; called once per request, so
        operators never restart.

        ``load_rules`` also walks every registered rule each time (a fifth
        of a show's CPU); it runs only when the policy file or directories,
        as oslo.config finds them, are not as they were at the last load.
        """
        files = self._policy_files()
        if files == self._files:
            return
        self.enforcer.load_rules()
        self._files = files
        names = frozenset(self.enforcer.rules) | frozenset(self.enforcer.registered_rules)
        if names != self._names or self.enforcer.rules is not self._rules_obj:
            self._names = names
            self._get_attr_rules = {}
            self._plans = {}
            self._generation += 1
            self._rules_obj = self.enforcer.rules

    def _policy_files(self) -> tuple[Any, ...]:
        """Where the policy file and directories are, with each file's
        modification time, size and inode (a replaced file is a change)."""
        conf = self.enforcer.conf
        found: list[Any] = []
        for name in [self.enforcer.policy_file, *conf.oslo_policy.policy_dirs]:
            path = self._find(name)
            if path is None:
                found.append((name, None))
                continue
            entries = [path]
            if os.path.isdir(path):
                entries += sorted(os.path.join(path, f) for f in os.listdir(path))
            for entry in entries:
                try:
                    st = os.stat(entry)
                    found.append((entry, st.st_mtime_ns, st.st_size, st.st_ino))
                except OSError:
                    found.append((entry, None))
        return tuple(found)

    def _find(self, name: str) -> str | None:
        """``conf.find_file``, remembered: searching every configuration
        directory costs more than the rest of a refresh. A file found is
        checked with one ``stat``; one not found is looked for again once a
        second, so a policy file created on a running server is picked up."""
        now = time.monotonic()
        known = self._found.get(name)
        if known is not None:
            path, looked = known
            if (os.path.exists(path) if path is not None else now - looked < 1.0):
                return path
        path = self.enforcer.conf.find_file(name)
        self._found[name] = (path, now)
        return path

    def check(self, ctx: Any, action: str, target: dict[str, Any]) -> bool:
        """Evaluate ``action``; results are memoised per request.

        A rule's outcome depends only on the caller and on the few target
        keys that are left once the caller's credentials are applied (see
        ``plan``), so for a list of 1,000 ports the rules are evaluated once
        per distinct (owner, network owner, ...), or once in all for an
        admin, and not once per row: oslo.policy's evaluation is far too
        slow for that.
        """
        if action not in self._names:
            return True
        value, keys = self.plan(ctx, action)
        if value is not None:
            return value
        cache: dict[Any, Any] | None = getattr(ctx, "policy_cache", None)
        memo_key = None
        if keys is not None and cache is not None:
            memo_key = (action, self._generation, tuple([_hashable(target.get(k)) for k in keys]))
            found: bool | None = cache.get(memo_key)
            if found is not None:
                return found
        result = self._evaluate(action, target, ctx.policy_creds())
        if memo_key is not None and cache is not None:
            cache[memo_key] = result
        return result

    def plan(self, ctx: Any, action: str) -> tuple[bool | None, tuple[str, ...] | None]:
        """``action`` partially evaluated for this caller: its outcome when
        that does not depend on the target, else None and the target keys it
        still reads (None when a check we do not know reads who knows what).

        Roles, ``is_admin`` and the other untemplated checks depend on the
        caller alone, so ``admin_or_owner`` is simply true for an admin.
        Memoised per caller (the credentials, not the request), so a
        request pays for it only the first time such a caller comes.
        """
        if action not in self._names:
            return True, ()
        cache = getattr(ctx, "policy_cache", None)
        if cache is not None:
            # Per generation of the rules: a context outliving a policy
            # file edit (in tests) does not keep the old rules' plans.
            memo = ("plan", action, self._generation)
            mine: tuple[bool | None, tuple[str, ...] | None] | None = cache.get(memo)
            if mine is None:
                mine = cache[memo] = self._caller_plan(ctx, action)
            return mine
        return self._caller_plan(ctx, action)

    def _caller_plan(self, ctx: Any, action: str) -> tuple[bool | None, tuple[str, ...] | None]:
        key = getattr(ctx, "policy_key", None)
        memo = (action, key() if key is not None else _hashable(ctx.policy_creds()))
        found = self._plans.get(memo)
        if found is None:
            found = self._plan(action, ctx.policy_creds())
            if len(self._plans) > 4096:  # many distinct callers: start over
                self._plans.clear()
            self._plans[memo] = found
        return found

    def _plan(self, action: str, creds: dict[str, Any]) -> tuple[bool | None, tuple[str, ...] | None]:
        rule = self.enforcer.rules.get(action)
        if rule is None:
            rule = self.enforcer.rules.get("default")
            if rule is None:
                return False, ()
        default = self.enforcer.registered_rules.get(action)
        scopes = getattr(default, "scope_types", None)
        token_scope = "system" if creds.get("system_scope") else "project"
        if scopes and token_scope not in scopes:
            return False, ()
        value, keys = _residual(rule, creds, self.enforcer.rules, frozenset({action}))
        return value, (None if keys is None else tuple(sorted(keys)))

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

    def enforce(self, ctx: Any, action: str, target: dict[str, Any]) -> None:
        if not self.check(ctx, action, target):
            raise errors.PolicyNotAuthorized(action=action)

    def enforce_attributes(self, ctx: Any, verb: str, singular: str,
                           body: dict[str, Any], target: dict[str, Any]) -> None:
        """Check ``<verb>_<resource>:<attr>`` rules, and ``:<attr>:<key>`` ones for
        the keys of a dict value or of the dicts in a list value."""
        action = f"{verb}_{singular}"
        for name in self.attribute_rules(verb, singular, body):
            if not self.check(ctx, name, target):
                # Upstream names the action and the attribute rule together.
                raise errors.PolicyNotAuthorized(message=f"(rule:{action} and "
                                                 f"rule:{name}) is disallowed by policy")

    def attribute_rules(self, verb: str, singular: str, body: dict[str, Any]) -> list[str]:
        """The attribute rules ``enforce_attributes`` checks for ``body``."""
        action = f"{verb}_{singular}"
        names: list[str] = []
        for key, value in body.items():
            rule = f"{action}:{key}"
            if rule in self._names:
                names.append(rule)
            if isinstance(value, list):
                subs = sorted({k for item in value if isinstance(item, dict) for k in item})
            elif isinstance(value, dict):
                # ``update_router:external_gateway_info:enable_snat``: every
                # key given is checked, whatever its value, as upstream.
                subs = sorted(value)
            else:
                subs = []
            names += [f"{rule}:{sub}" for sub in subs if f"{rule}:{sub}" in self._names]
        return names

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

    def view(self, ctx: Any, singular: str) -> "View":
        """Who sees which rows and attributes of ``singular``, for one caller."""
        return View(self, ctx, singular)


class View:
    """The ``get_<resource>`` rule and its attribute rules for one caller.

    Deciding a row costs one memo lookup: the key is the target values
    the rules still read once the caller's credentials are applied, so a
    list of 1,000 rows with a handful of distinct owners evaluates the
    rules a handful of times, and an admin's list once.
    """

    def __init__(self, policy: Policy, ctx: Any, singular: str) -> None:
        self.policy, self.ctx = policy, ctx
        self.action = f"get_{singular}"
        self.attr_rules = policy._attr_rules(singular)
        keys: set[str] | None = set()
        for rule in [self.action] + [r for r, _ in self.attr_rules]:
            _value, found = policy.plan(ctx, rule)
            if found is None or keys is None:
                keys = None
            else:
                keys |= set(found)
        # The target keys that decide a row; None: every row is decided anew.
        self.keys: tuple[str, ...] | None = None if keys is None else tuple(sorted(keys))
        self._memo: dict[Any, tuple[bool, frozenset[str]]] = {}

    def __call__(self, target: dict[str, Any]) -> tuple[bool, frozenset[str]]:
        """Whether the caller sees ``target`` at all, and which attributes not
        (attributes it may not see, whether or not ``target`` has them)."""
        if self.keys is None:
            return self._decide(target)
        memo = tuple([_hashable(target.get(k)) for k in self.keys]) if self.keys else ()
        found = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = self._decide(target)
        return found

    def _decide(self, target: dict[str, Any]) -> tuple[bool, frozenset[str]]:
        check = self.policy.check
        return (check(self.ctx, self.action, target),
                frozenset(attr for rule, attr in self.attr_rules
                          if not check(self.ctx, rule, target)))


# ``%(name)s`` in a check's match: ``match % target`` looks ``name`` up as a
# whole (dots and colons included).
_TEMPLATE = re.compile(r"%\(([^)]*)\)")


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


def _residual(check: Any, creds: dict[str, Any], rules: Any,
              seen: frozenset[str]) -> tuple[bool | None, frozenset[str] | None]:
    """A check tree partially evaluated for ``creds``: (outcome, ()) when the
    target does not matter, else (None, the target keys still read), with
    None for keys when a check we do not know is involved."""
    if check is None:  # a rule that names a missing rule is false, as oslo.policy has it
        return False, frozenset()
    if isinstance(check, _checks.TrueCheck):
        return True, frozenset()
    if isinstance(check, _checks.FalseCheck):
        return False, frozenset()
    if isinstance(check, (_checks.AndCheck, _checks.OrCheck)):
        decisive = isinstance(check, _checks.OrCheck)  # the value that ends the check
        keys: set[str] = set()
        unknown = False
        for sub in check.rules:
            value, found = _residual(sub, creds, rules, seen)
            if value is decisive:
                return decisive, frozenset()
            if value is None:
                if found is None:
                    unknown = True
                else:
                    keys |= found
        if unknown:
            return None, None
        if not keys:
            return not decisive, frozenset()
        return None, frozenset(keys)
    if isinstance(check, _checks.NotCheck):
        value, found = _residual(check.rule, creds, rules, seen)
        return (None if value is None else not value), found
    if isinstance(check, _checks.RuleCheck):
        if check.match in seen:
            return None, None
        return _residual(rules.get(check.match), creds, rules, seen | {check.match})
    if isinstance(check, FieldCheck):
        return None, frozenset({check.field})
    if isinstance(check, (_checks.GenericCheck, _checks.RoleCheck)):
        templated = _TEMPLATE.findall(check.match)
        if templated:
            return None, frozenset(templated)
        try:
            # Neither kind of check reads the enforcer.
            return bool(check({}, creds, None)), frozenset()  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - a match we cannot pre-evaluate
            return None, None
    return None, None
