"""Flavors and their bindings on every SQL backend: the bindings' keys (a
duplicate, a bound profile, a deleted flavor's bindings going with it) and
the boolean filter answer alike on each."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.api._helpers import error
from tests.conftest import Client, Server
from tests.flavors.conftest import CONF, FLAVORS, PROFILES, bind, flavor, profile


@pytest.fixture
def backend_admin(tmp_path, db_url) -> Iterator[Client]:
    srv = Server(tmp_path, db_url=db_url, extra=CONF).start()
    try:
        yield Client(srv.url)
    finally:
        srv.stop()


@pytest.mark.backend
def test_flavor_bindings_on_each_backend(backend_admin: Client) -> None:
    admin = backend_admin
    fl, off = flavor(admin, description="x" * 1024), flavor(admin, enabled=False)
    sp = profile(admin, metainfo="m" * 4096)
    assert bind(admin, fl["id"], sp["id"])[0] == 201
    error(bind(admin, fl["id"], sp["id"]), 409, "FlavorServiceProfileBindingExists")
    error(admin.delete(f"{PROFILES}/{sp['id']}"), 409, "ServiceProfileInUse")
    assert [f["id"] for f in admin.get(f"{FLAVORS}?enabled=false")[1]["flavors"]] == [off["id"]]
    assert admin.get(f"{FLAVORS}/{fl['id']}")[1]["flavor"]["service_profiles"] == [sp["id"]]
    assert admin.delete(f"{FLAVORS}/{fl['id']}") == (204, None)
    assert admin.delete(f"{PROFILES}/{sp['id']}") == (204, None)
