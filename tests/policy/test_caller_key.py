"""A caller's memoised policy plans are keyed by ``Context.policy_key``: it
must tell apart any two callers whose credentials differ, or one caller
would be judged by another's plan."""
from __future__ import annotations

import dataclasses

from neutrino.context import Context
from neutrino.policy.engine import _hashable

BASE = Context(user_id="u", project_id="p", roles=["member"], project_name="n")
VARIANTS = [
    dataclasses.replace(BASE, user_id="v"),
    dataclasses.replace(BASE, project_id="q"),
    dataclasses.replace(BASE, roles=["member", "admin"]),
    dataclasses.replace(BASE, roles=["reader"]),
    dataclasses.replace(BASE, is_admin=True),
    dataclasses.replace(BASE, system_scope="all"),
    dataclasses.replace(BASE, project_name="m"),
]


def test_callers_with_different_credentials_have_different_keys() -> None:
    callers = [BASE, *VARIANTS]
    creds = {_hashable(c.policy_creds()) for c in callers}
    keys = {c.policy_key() for c in callers}
    assert len(creds) == len(keys) == len(callers)


def test_the_key_follows_a_change_of_is_admin_within_a_request() -> None:
    ctx = dataclasses.replace(BASE)
    before = ctx.policy_key()
    ctx.is_admin = True  # what the context hook does after context_is_admin
    assert ctx.policy_key() != before


def test_every_credential_is_in_the_key() -> None:
    """A field added to policy_creds must be added to policy_key too."""
    for variant in VARIANTS:
        changed = {k for k, v in variant.policy_creds().items()
                   if BASE.policy_creds()[k] != v}
        assert changed and variant.policy_key() != BASE.policy_key(), changed
    assert len(BASE.policy_creds()) - 1 == len(BASE.policy_key())  # tenant_id is project_id
