"""The L2 agents' device calls take a whole list in one go: the statements
a list costs do not grow with its devices (an agent's resync asks about a
hundred at a time and reports a thousand up), its answers are those each
device gets alone, and one device that fails fails alone."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from neutrino.plugins import events as ev
from neutrino.plugins.ml2 import agents_db
from neutrino.plugins.ml2 import rpc as l2_rpc
from neutrino.plugins.ml2.rpc import L2Endpoint
from tests.conftest import migrated_database
from tests.inprocess import CountingApp

ML2 = ("[ml2]\ntype_drivers = vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\nextension_drivers = port_security\n"
       "[ml2_type_vxlan]\nvni_ranges = 100:200\n")
HOST, OTHER = "compute-a", "compute-b"


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mariadb"])
def app(request: pytest.FixtureRequest,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[CountingApp]:
    """The core plugin on each backend, with an OVS agent alive on both hosts."""
    tmp = tmp_path_factory.mktemp("device-batches")
    with migrated_database(request.param, tmp) as url:
        app = CountingApp(tmp, ML2, url=url)
        try:
            app.api.plugin.initialize()  # the VXLAN pool, as the server's start fills it
            with app.api.plugin.db.writer() as conn:
                for host in (HOST, OTHER):
                    agents_db.report(conn, agents_db.AGENT_TYPE_OVS, "neutron-openvswitch-agent",
                                     host, "N/A", {"tunnel_types": ["vxlan"],
                                                   "bridge_mappings": {}})
            yield app
        finally:
            app.api.plugin.db.dispose()


@pytest.fixture(scope="module")
def network(app: CountingApp) -> str:
    net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}}).json
    app.client.simulate_post("/v2.0/subnets", json={"subnet": {
        "network_id": net["network"]["id"], "ip_version": 4, "cidr": "10.0.0.0/16"}})
    return str(net["network"]["id"])


@pytest.fixture
def endpoint(app: CountingApp) -> L2Endpoint:
    return L2Endpoint(app.api.plugin)


@pytest.fixture
def announced(app: CountingApp) -> Iterator[list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Every (before, after) of a port update announced, as l2population and
    the compute notifier hear them."""
    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []
    subscribers = app.api.plugin.events._subscribers[("ports", ev.AFTER_UPDATE)]
    record = lambda ctx, before, after: seen.append((before, after))  # noqa: E731
    subscribers.append(record)
    yield seen
    subscribers.remove(record)


def bound_ports(app: CountingApp, network: str, count: int, host: str = HOST) -> list[str]:
    body = {"ports": [{"network_id": network, "binding:host_id": host,
                       "device_owner": "compute:nova"} for _ in range(count)]}
    res = app.client.simulate_post("/v2.0/ports", json=body)
    assert res.status_code == 201, res.text
    assert {p["binding:vif_type"] for p in res.json["ports"]} == {"ovs"}
    return [p["id"] for p in res.json["ports"]]


def statements(app: CountingApp, call: Any) -> tuple[int, Any]:
    app.statements = 0
    answer = call()
    return app.statements, answer


def status(app: CountingApp, port_id: str) -> str:
    return str(app.client.simulate_get(f"/v2.0/ports/{port_id}").json["port"]["status"])


@pytest.mark.parametrize("subscribed", [False, True], ids=["quiet", "announced"])
def test_a_resyncs_calls_cost_the_same_statements_for_3_or_30_devices(
        app: CountingApp, network: str, endpoint: L2Endpoint, subscribed: bool,
        request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Quiet: nobody listens to port updates (no before and after to load)."""
    seen = request.getfixturevalue("announced") if subscribed else None
    if not subscribed:
        monkeypatch.setitem(app.api.plugin.events._subscribers, ("ports", ev.AFTER_UPDATE), [])
    few, many = bound_ports(app, network, 3), bound_ports(app, network, 30)
    counts = {}
    for label, ports in (("few", few), ("many", many)):
        counts[label, "details"], listed = statements(
            app, lambda: endpoint.get_devices_details_list_and_failed_devices(
                None, ports, host=HOST))
        assert [d["port_id"] for d in listed["devices"]] == ports
        counts[label, "up"], result = statements(
            app, lambda: endpoint.update_device_list(None, ports, [], host=HOST))
        assert result["devices_up"] == ports and result["failed_devices_up"] == []
        counts[label, "down"], _ = statements(
            app, lambda: endpoint.update_device_list(None, [], ports, host=HOST))
    assert {k: v for k, v in counts.items() if k[0] == "many"} == {
        ("many", call): n for (_, call), n in counts.items() if _ == "few"}
    assert {status(app, p) for p in few + many} == {"DOWN"}
    if seen is not None:  # each port announced at each of its three changes
        changes = [(b["status"], a["status"]) for b, a in seen if b["id"] in many]
        assert changes == [("DOWN", "BUILD")] * 30 + [("BUILD", "ACTIVE")] * 30 + \
            [("ACTIVE", "DOWN")] * 30
        assert all(a["revision_number"] == b["revision_number"] + 1 for b, a in seen)


def test_a_list_answers_each_device_as_it_would_alone(
        app: CountingApp, network: str, endpoint: L2Endpoint) -> None:
    here, elsewhere = bound_ports(app, network, 2), bound_ports(app, network, 1, OTHER)
    unbound = app.client.simulate_post("/v2.0/ports", json={"port": {
        "network_id": network}}).json["port"]["id"]
    missing = str(uuid.uuid4())
    devices = [here[0], elsewhere[0], missing, here[1][:11], unbound, here[0]]
    listed = endpoint.get_devices_details_list_and_failed_devices(None, devices, host=HOST)
    assert listed["failed_devices"] == []
    assert listed["devices"] == [endpoint.get_device_details(None, d, host=HOST)
                                 for d in devices]
    first, _, gone, by_prefix, not_bound, again = listed["devices"]
    assert first["port_id"] == here[0] and first["network_type"] == "vxlan"
    assert first["mtu"] == 1450 and first["port_security_enabled"] is True
    assert listed["devices"][1] == {"device": elsewhere[0], "no_active_binding": True}
    assert gone == {"device": missing}
    assert by_prefix["device"] == here[1][:11] and by_prefix["port_id"] == here[1]
    assert not_bound == {"device": unbound, "no_active_binding": True}
    assert again == first
    assert [status(app, p) for p in here + elsewhere] == ["BUILD", "BUILD", "DOWN"]
    result = endpoint.update_device_list(None, [here[0], elsewhere[0], missing], [missing],
                                         host=HOST)
    assert result == {"devices_up": [here[0], elsewhere[0], missing], "failed_devices_up": [],
                      "devices_down": [missing], "failed_devices_down": []}
    assert [status(app, p) for p in here + elsewhere] == ["ACTIVE", "BUILD", "DOWN"]


def test_one_device_that_fails_fails_alone(
        app: CountingApp, network: str, endpoint: L2Endpoint,
        monkeypatch: pytest.MonkeyPatch) -> None:
    good, bad = bound_ports(app, network, 2)
    wire = l2_rpc._details_of

    def breaks_on_bad(device: str, port: dict[str, Any], *args: Any) -> dict[str, Any]:
        if port["id"] == bad:
            raise RuntimeError("this device cannot be described")
        return wire(device, port, *args)
    monkeypatch.setattr(l2_rpc, "_details_of", breaks_on_bad)
    listed = endpoint.get_devices_details_list_and_failed_devices(None, [good, bad], host=HOST)
    assert [d["port_id"] for d in listed["devices"]] == [good]
    assert listed["failed_devices"] == [bad]
    assert (status(app, good), status(app, bad)) == ("BUILD", "DOWN")
