"""The ``openstack network ...`` commands against neutrino."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.clients


def test_network_lifecycle_create_show_set_unset_delete(cli, conn, name, cleanup):
    created = cli.json("network", "create", name, "--description", "first",
                       "--tag", "red", "--tag", "blue", "--disable", "--mtu", "1400")
    cleanup.add("network", created["id"])
    assert created["name"] == name
    assert created["description"] == "first"
    assert created["admin_state_up"] is False
    assert created["mtu"] == 1400
    assert created["status"] == "ACTIVE"
    assert created["shared"] is False
    assert created["subnets"] == []
    assert sorted(created["tags"]) == ["blue", "red"]
    assert created["project_id"]

    renamed = f"{name}-b"
    cli.run("network", "set", name, "--name", renamed, "--description", "second",
            "--enable", "--mtu", "1450", "--tag", "green")
    cli.run("network", "unset", "--tag", "red", renamed)

    shown = cli.json("network", "show", renamed)
    assert shown["id"] == created["id"]
    assert shown["name"] == renamed
    assert shown["description"] == "second"
    assert shown["admin_state_up"] is True
    assert shown["mtu"] == 1450
    assert sorted(shown["tags"]) == ["blue", "green"]
    assert shown["revision_number"] > created["revision_number"]
    assert shown["created_at"] == created["created_at"]

    cli.run("network", "delete", renamed)
    assert conn.network.find_network(created["id"]) is None


def test_network_list_filters_by_tags_state_and_name_and_selects_columns(cli, conn, name, cleanup):
    a = conn.network.create_network(name=f"{name}-a", admin_state_up=True)
    cleanup.add("network", a.id)
    b = conn.network.create_network(name=f"{name}-b", admin_state_up=False)
    cleanup.add("network", b.id)
    conn.network.set_tags(a, [f"{name}-x", f"{name}-y"])
    conn.network.set_tags(b, [f"{name}-y"])

    both = cli.json("network", "list", "--tags", f"{name}-y", "-c", "ID", "-c", "Name")
    assert all(set(row) == {"ID", "Name"} for row in both)
    assert {(r["ID"], r["Name"]) for r in both} == {(a.id, a.name), (b.id, b.name)}

    only_a = cli.value("network", "list", "--tags", f"{name}-x,{name}-y", "-c", "ID")
    assert only_a == [a.id]

    not_x = cli.value("network", "list", "--any-tags", f"{name}-y", "--not-tags", f"{name}-x",
                      "-c", "ID")
    assert not_x == [b.id]

    disabled = cli.value("network", "list", "--disable", "--name", b.name, "-c", "ID", "-c", "Name")
    assert disabled == [f"{b.id} {b.name}"]

    long = cli.json("network", "list", "--long", "--name", a.name)
    assert len(long) == 1
    assert long[0]["ID"] == a.id
    assert long[0]["State"] is True
    assert sorted(long[0]["Tags"]) == [f"{name}-x", f"{name}-y"]


def test_network_show_of_unknown_name_fails_with_not_found(cli, name):
    # a fresh ``python -m openstackclient.shell`` process, not the batch driver
    proc = cli.run_fresh("network", "show", f"{name}-missing")
    assert proc.returncode == 1
    assert f"No Network found for {name}-missing" in proc.stderr
