"""Flavors and service profiles through openstacksdk and the ``openstack`` CLI."""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.clients.conftest import CLI
from tests.clients.module_fixtures import cli, conn  # noqa: F401 - the fixtures
from tests.flavors.conftest import DRIVER

pytestmark = pytest.mark.clients


@pytest.fixture
def name() -> str:
    return f"flavor-{uuid.uuid4().hex[:8]}"


def test_a_flavor_offering_a_profile_with_the_cli(cli: CLI, name: str) -> None:
    fl = cli.json("network", "flavor", "create", "--service-type", "L3_ROUTER_NAT",
                  "--description", "econ", name)
    sp = cli.json("network", "flavor", "profile", "create", "--driver", DRIVER)
    try:
        assert (fl["name"], fl["service_type"], fl["enabled"]) == (name, "L3_ROUTER_NAT", True)
        cli.run("network", "flavor", "add", "profile", name, sp["id"])
        assert cli.json("network", "flavor", "show", name)["service_profile_ids"] == [sp["id"]]
        in_use = cli.run("network", "flavor", "profile", "delete", sp["id"], check=False)
        assert in_use.returncode != 0
        cli.run("network", "flavor", "remove", "profile", name, sp["id"])
        cli.run("network", "flavor", "set", name, "--disable")
        assert cli.json("network", "flavor", "show", name)["enabled"] is False
        assert name in [f["Name"] for f in cli.json("network", "flavor", "list")]
    finally:
        cli.run("network", "flavor", "profile", "delete", sp["id"], check=False)
        cli.run("network", "flavor", "delete", name, check=False)


def test_flavors_and_profiles_with_the_sdk(conn: Any, name: str) -> None:
    fl = conn.network.create_flavor(name=name, service_type="FLAVORS")
    sp = conn.network.create_service_profile(meta_info='{"data": "value"}',
                                             description=name)
    try:
        fl.associate_flavor_with_service_profile(conn.network, sp.id)
        assert conn.network.get_flavor(fl.id).service_profile_ids == [sp.id]
        fl.disassociate_flavor_from_service_profile(conn.network, sp.id)
        conn.network.update_service_profile(sp, is_enabled=False)
        assert conn.network.get_service_profile(sp.id).is_enabled is False
        assert sp.id in [p.id for p in conn.network.service_profiles()]
    finally:
        conn.network.delete_service_profile(sp, ignore_missing=True)
        conn.network.delete_flavor(fl, ignore_missing=True)
    assert conn.network.find_flavor(fl.id) is None
