"""The policy engine: upstream's default rules, field checks, overrides."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from neutrino import errors
from neutrino.context import Context, expand_roles
from neutrino.policy.engine import Policy
from neutrino.service import make_conf


def _policy(tmp_path: Path, rules: str | None = None) -> tuple[Policy, Path]:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(rules or "{}\n")
    conf_file = tmp_path / "n.conf"
    conf_file.write_text(f"[oslo_policy]\npolicy_file = {policy_file}\n"
                         f"enforce_scope = True\nenforce_new_defaults = True\n")
    return Policy(make_conf(["--config-file", str(conf_file)])), policy_file


def _ctx(project: str, *roles: str) -> Context:
    ctx = Context(user_id="u", project_id=project, roles=expand_roles(list(roles)))
    return ctx


def test_admin_role_implies_member_and_reader() -> None:
    assert expand_roles(["admin"]) == ["admin", "manager", "member", "reader"]
    assert expand_roles(["member"]) == ["member", "reader"]


def test_member_may_create_network_in_own_project_only(tmp_path: Path) -> None:
    pol, _ = _policy(tmp_path)
    ctx = _ctx("p1", "member")
    assert pol.check(ctx, "create_network", {"project_id": "p1"})
    assert not pol.check(ctx, "create_network", {"project_id": "p2"})


def test_reader_may_read_but_not_write(tmp_path: Path) -> None:
    pol, _ = _policy(tmp_path)
    ctx = _ctx("p1", "reader")
    assert pol.check(ctx, "get_network", {"project_id": "p1", "shared": False})
    assert not pol.check(ctx, "update_network", {"project_id": "p1"})
    with pytest.raises(errors.PolicyNotAuthorized) as exc:
        pol.enforce(ctx, "delete_network", {"project_id": "p1"})
    assert exc.value.code == 403
    assert "rule:delete_network" in exc.value.msg


def test_shared_field_check_makes_other_projects_network_visible(tmp_path: Path) -> None:
    pol, _ = _policy(tmp_path)
    ctx = _ctx("p2", "member")
    assert not pol.check(ctx, "get_network", {"project_id": "p1", "shared": False})
    assert pol.check(ctx, "get_network", {"project_id": "p1", "shared": True})


def test_network_owner_may_see_ports_of_other_projects_on_it(tmp_path: Path) -> None:
    pol, _ = _policy(tmp_path)
    ctx = _ctx("owner", "member")
    port = {"project_id": "someone", "network:project_id": "owner"}
    assert pol.check(ctx, "get_port", port)
    assert not pol.check(_ctx("third", "member"), "get_port", port)


def test_shared_attribute_on_create_is_admin_only(tmp_path: Path) -> None:
    pol, _ = _policy(tmp_path)
    target = {"project_id": "p1", "shared": True}
    with pytest.raises(errors.PolicyNotAuthorized):
        pol.enforce_attributes(_ctx("p1", "member"), "create", "network", {"shared": True}, target)
    admin = _ctx("p1", "admin")
    admin.is_admin = True
    pol.enforce_attributes(admin, "create", "network", {"shared": True}, target)


def test_network_device_owner_needs_network_ownership(tmp_path: Path) -> None:
    pol, _ = _policy(tmp_path)
    ctx = _ctx("p2", "member")
    target = {"project_id": "p2", "device_owner": "network:dhcp",
              "network:project_id": "p1", "shared": True}
    with pytest.raises(errors.PolicyNotAuthorized):
        pol.enforce_attributes(ctx, "create", "port", {"device_owner": "network:dhcp"}, target)
    target["device_owner"] = "compute:nova"
    pol.enforce_attributes(ctx, "create", "port", {"device_owner": "compute:nova"}, target)


def test_hidden_attributes_follow_get_attribute_rules(tmp_path: Path) -> None:
    pol, _ = _policy(tmp_path)
    item = {"project_id": "p1", "provider:network_type": "vxlan", "name": "n"}
    assert pol.hidden_attributes(_ctx("p1", "member"), "network", item) == ["provider:network_type"]
    admin = _ctx("p1", "admin")
    assert pol.hidden_attributes(admin, "network", item) == []


def test_policy_file_override_applies_without_restart(tmp_path: Path) -> None:
    pol, policy_file = _policy(tmp_path)
    ctx = _ctx("p1", "member")
    assert pol.check(ctx, "create_network", {"project_id": "p1"})
    policy_file.write_text('"create_network": "role:admin"\n')
    import os
    import time
    later = time.time() + 5
    os.utime(policy_file, (later, later))
    pol.refresh()
    assert not pol.check(ctx, "create_network", {"project_id": "p1"})


def test_rules_are_reloaded_only_when_the_policy_file_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reloading walks every registered rule: once per request it cost a
    fifth of a show. An untouched file is one ``stat``; a replaced or
    edited one reloads."""
    pol, policy_file = _policy(tmp_path)
    loads: list[bool] = []
    real = pol.enforcer.load_rules
    monkeypatch.setattr(pol.enforcer, "load_rules", lambda *a: loads.append(True) or real(*a))
    for _ in range(5):
        pol.refresh()
    assert loads == []
    replacement = tmp_path / "new.yaml"
    replacement.write_text('"create_network": "role:admin"\n')
    replacement.replace(policy_file)  # same size and time would not matter: a new inode
    pol.refresh()
    assert loads == [True]
    assert not pol.check(_ctx("p1", "member"), "create_network", {"project_id": "p1"})


def test_a_policy_file_created_on_a_running_server_is_picked_up(tmp_path: Path) -> None:
    conf_file = tmp_path / "n.conf"
    policy_file = tmp_path / "later.yaml"
    conf_file.write_text(f"[oslo_policy]\npolicy_file = {policy_file}\n")
    pol = Policy(make_conf(["--config-file", str(conf_file)]))
    ctx = _ctx("p1", "member")
    assert pol.check(ctx, "create_network", {"project_id": "p1"})
    policy_file.write_text('"create_network": "role:admin"\n')
    deadline = time.monotonic() + 5
    while pol.check(ctx, "create_network", {"project_id": "p1"}):
        assert time.monotonic() < deadline, "the new policy file was never loaded"
        time.sleep(0.1)
        pol.refresh()


def test_dict_attribute_keys_are_checked_by_their_own_rules(tmp_path: Path) -> None:
    """``update_router:external_gateway_info:enable_snat``: each key given in
    a dict attribute has its rule, whatever the value (upstream's
    sub-attribute checks)."""
    from oslo_policy import policy as oslo_policy
    pol, _ = _policy(tmp_path)
    pol.register([oslo_policy.RuleDefault("update_thing:info", "rule:admin_or_owner"),
                  oslo_policy.RuleDefault("update_thing:info:snat", "rule:admin_only")])
    ctx = _ctx("p1", "member")
    target = {"project_id": "p1"}
    pol.enforce_attributes(ctx, "update", "thing", {"info": {"net": "x"}}, target)
    with pytest.raises(errors.PolicyNotAuthorized) as exc:
        pol.enforce_attributes(ctx, "update", "thing", {"info": {"net": "x", "snat": True}},
                               target)
    assert "rule:update_thing:info:snat" in exc.value.msg
    admin = _ctx("p1", "admin")
    admin.is_admin = True
    pol.enforce_attributes(admin, "update", "thing", {"info": {"snat": False}}, target)


def test_an_admins_get_port_rules_do_not_depend_on_the_port(tmp_path: Path) -> None:
    """Partial evaluation with the caller's credentials: one decision serves
    an admin's whole list, a member's depends on the owners only."""
    pol, _ = _policy(tmp_path)
    admin = _ctx("p1", "admin")
    admin.is_admin = True
    view = pol.view(admin, "port")
    assert view.keys == ()
    assert view({"project_id": "anyone"}) == (True, frozenset())
    member_view = pol.view(_ctx("p1", "member"), "port")
    assert member_view.keys and "project_id" in member_view.keys
    assert member_view({"project_id": "p1", "network:project_id": "x"})[0]
    visible, hidden = member_view({"project_id": "p2", "network:project_id": "p1"})
    assert visible and "binding:host_id" in hidden
    assert not member_view({"project_id": "p2", "network:project_id": "p3"})[0]


def test_a_templated_role_check_keeps_reading_the_target(tmp_path: Path) -> None:
    pol, _ = _policy(tmp_path, '"get_thing": "role:%(needed_role)s"\n')
    ctx = _ctx("p1", "member")
    assert pol.plan(ctx, "get_thing") == (None, ("needed_role",))
    assert pol.check(ctx, "get_thing", {"needed_role": "member"})
    assert not pol.check(ctx, "get_thing", {"needed_role": "admin"})


def test_a_rule_the_caller_decides_alone_is_constant(tmp_path: Path) -> None:
    pol, _ = _policy(tmp_path, '"get_thing": "role:admin or project_id:%(project_id)s"\n'
                               '"make_thing": "role:reader and not role:member"\n')
    admin, member = _ctx("p1", "admin"), _ctx("p1", "member")
    assert pol.plan(admin, "get_thing") == (True, ())
    assert pol.plan(member, "get_thing") == (None, ("project_id",))
    assert pol.plan(member, "make_thing") == (False, ())
    assert pol.plan(_ctx("p1", "reader"), "make_thing") == (True, ())
