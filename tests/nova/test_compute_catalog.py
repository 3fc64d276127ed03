"""Without ``[nova] endpoint_override`` the notifier finds the compute API in
the Keystone catalog: it logs in with the ``[nova]`` credentials, takes the
``compute`` endpoint of ``region_name`` and ``endpoint_type``, and sends the
token with each batch."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from neutrino.conf.nova import register
from neutrino.notifiers.nova import ComputeApi, NovaNotifier
from neutrino.service import make_conf
from tests.nova.fake_compute import FakeCompute
from tests.nova.fake_identity import FakeIdentity

EVENT = {"name": "network-vif-plugged", "server_uuid": "s", "tag": "p", "status": "completed"}


@pytest.fixture
def computes() -> Iterator[dict[str, FakeCompute]]:
    fakes = {name: FakeCompute() for name in ("one-public", "two-public", "two-internal")}
    yield fakes
    for fake in fakes.values():
        fake.stop()


@pytest.fixture
def identity(computes: dict[str, FakeCompute]) -> Iterator[FakeIdentity]:
    fake = FakeIdentity("secret", {
        ("RegionOne", "public"): computes["one-public"].url,
        ("RegionTwo", "public"): computes["two-public"].url,
        ("RegionTwo", "internal"): computes["two-internal"].url})
    yield fake
    fake.stop()


def api(tmp_path: Path, identity: FakeIdentity, password: str = "secret", **nova: str) -> ComputeApi:
    options = {"auth_type": "password", "auth_url": identity.url, "username": "nova",
               "password": password, "project_name": "service",
               "user_domain_name": "Default", "project_domain_name": "Default", **nova}
    path = tmp_path / "neutron.conf"
    path.write_text("[DEFAULT]\nsend_events_interval = 3600\n[nova]\n"
                    + "".join(f"{k} = {v}\n" for k, v in options.items()))
    conf = make_conf(["--config-file", str(path)])
    register(conf)
    return ComputeApi(conf)


def test_the_catalog_endpoint_of_the_configured_region_and_interface_gets_the_batch(
        tmp_path: Path, identity: FakeIdentity, computes: dict[str, FakeCompute]) -> None:
    compute = api(tmp_path, identity, region_name="RegionTwo", endpoint_type="internal")
    assert compute.configured
    assert compute.send([EVENT]) is True
    assert computes["two-internal"].events == [EVENT]
    assert not computes["one-public"].events and not computes["two-public"].events
    sent = computes["two-internal"].headers[0]
    assert sent["X-Auth-Token"] == identity.tokens[-1]
    assert sent["X-OpenStack-Nova-API-Version"] == "2.1"
    login = identity.logins[-1]["identity"]["password"]["user"]
    assert login["name"] == "nova" and login["domain"]["name"] == "Default"


def test_the_public_interface_is_the_default(
        tmp_path: Path, identity: FakeIdentity, computes: dict[str, FakeCompute]) -> None:
    assert api(tmp_path, identity, region_name="RegionOne").send([EVENT]) is True
    assert computes["one-public"].events == [EVENT]


def test_a_batch_refused_at_login_is_sent_once_the_credentials_are_accepted(
        tmp_path: Path, identity: FakeIdentity, computes: dict[str, FakeCompute]) -> None:
    compute = api(tmp_path, identity, password="renewed", region_name="RegionOne")
    notifier = NovaNotifier(compute.conf, None, compute)
    notifier.queue(EVENT)
    notifier.flush()  # the identity service still expects the old password
    assert not any(fake.events for fake in computes.values())
    identity.password = "renewed"
    notifier.flush()
    assert computes["one-public"].events == [EVENT]
