"""Upstream's agents keep ports, networks, subnets and security groups as
versioned objects: the server answers their ``pull``/``bulk_pull`` (topic
``q-plugin``, namespace None, 1.1) and pushes each committed change on the
type's ``neutron-vo-<type>-<version>`` fanout, in oslo.versionedobjects'
primitive format. Upstream's own object classes (``tests/upstream_venv.py``)
read what neutrino sends."""
from __future__ import annotations

import json
import subprocess
import threading
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.rpc import topics
from neutrino.rpc.admin_context import admin_context
from neutrino.rpc.transport import close_in_process, rpc_transport
from neutrino.rpc.vo_types import OBJECTS, TOP_LEVEL
from tests.fullstack.upstream_agents import VENV
from tests.rpc.bus import OvsAgent
from tests.rpc.test_in_process import HOST, InProcess

UPSTREAM = VENV / "bin" / "python"
needs_upstream = pytest.mark.usefixtures("upstream_neutron")


class Pushes:
    """A listener on the push fanouts, as upstream's agent's cache listens."""
    target = oslo_messaging.Target(version="1.1")

    def __init__(self) -> None:
        self.got: list[tuple[str, str, dict[str, Any]]] = []
        self.batches: list[tuple[str, list[str]]] = []  # (type, ids) of each push
        self.seen = threading.Condition()

    def push(self, context: Any, resource_list: list[dict[str, Any]], event_type: str) -> None:
        with self.seen:
            for obj in resource_list:
                self.got.append((obj["versioned_object.name"], event_type, obj))
            self.batches.append((resource_list[0]["versioned_object.name"],
                                 [o["versioned_object.data"]["id"] for o in resource_list]))
            self.seen.notify_all()

    def wait(self, name: str, event_type: str, rid: str,
             **wanted: Any) -> dict[str, Any] | None:
        def found() -> dict[str, Any] | None:
            return next((o for n, e, o in self.got if (n, e) == (name, event_type)
                         and o["versioned_object.data"]["id"] == rid
                         and all(o["versioned_object.data"].get(k) == v
                                 for k, v in wanted.items())), None)
        with self.seen:
            self.seen.wait_for(lambda: found() is not None, timeout=20)
            return found()


class UpstreamOvsAgent(OvsAgent):
    """As upstream's agent reports itself: with the object versions it caches,
    which make the server push changes."""

    def state(self) -> dict[str, Any]:
        return {**super().state(), "resource_versions": {
            name: OBJECTS[name].version for name in TOP_LEVEL}}


@pytest.fixture(scope="module")
def aio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[InProcess, Pushes]]:
    server = InProcess(tmp_path_factory.mktemp("vo"))
    server.rpc.start()
    pushes = Pushes()
    listeners = [oslo_messaging.get_rpc_server(
        rpc_transport(server.conf), oslo_messaging.Target(
            topic=OBJECTS[name].push_topic, server=HOST, fanout=True), [pushes])
        for name in TOP_LEVEL]
    for listener in listeners:
        listener.start()
    try:
        assert UpstreamOvsAgent(server.conf).register(within=30) == "new"
        yield server, pushes
    finally:
        for listener in listeners:
            listener.stop()
            listener.wait()
        server.rpc.stop()
        close_in_process()
        server.api.plugin.db.dispose()


def puller(aio: InProcess) -> Any:
    return oslo_messaging.get_rpc_client(rpc_transport(aio.conf), oslo_messaging.Target(
        topic=topics.PLUGIN, namespace=None, version="1.1"), timeout=20)


@pytest.fixture(scope="module")
def cloud(aio: tuple[InProcess, Pushes]) -> dict[str, Any]:
    server, _ = aio
    net = server.post("/v2.0/networks", {"network": {"name": "vo"}})["network"]
    subnet = server.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.78.0.0/24",
        "dns_nameservers": ["192.0.2.53"],
        "host_routes": [{"destination": "198.51.100.0/24", "nexthop": "10.78.0.9"}]}})["subnet"]
    group = server.post("/v2.0/security-groups", {"security_group": {"name": "web"}})
    port = server.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "device_owner": "compute:nova", "device_id": "vm",
        "binding:host_id": HOST, "security_groups": [group["security_group"]["id"]],
        "allowed_address_pairs": [{"ip_address": "10.78.0.200"}]}})["port"]
    return {"network": net, "subnet": subnet, "group": group["security_group"], "port": port}


def data(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["versioned_object.data"]  # type: ignore[no-any-return]


def test_an_agent_pulls_a_bound_port_with_its_segment(
        aio: tuple[InProcess, Pushes], cloud: dict[str, Any]) -> None:
    port = puller(aio[0]).call(admin_context(), "pull", resource_type="Port",
                               version="1.11", resource_id=cloud["port"]["id"])
    assert (port["versioned_object.name"], port["versioned_object.version"],
            port["versioned_object.namespace"]) == ("Port", "1.11", "versionedobjects")
    got = data(port)
    assert got["mac_address"] == cloud["port"]["mac_address"]
    assert got["security_group_ids"] == [cloud["group"]["id"]]
    assert [data(b)["host"] for b in got["bindings"]] == [HOST]
    assert json.loads(data(got["bindings"][0])["vif_details"]) == (
        cloud["port"]["binding:vif_details"])
    segment = data(data(got["binding_levels"][-1])["segment"])
    assert (segment["network_type"], segment["network_id"]) == ("vxlan", cloud["network"]["id"])
    assert [data(ip)["ip_address"] for ip in got["fixed_ips"]] == [
        cloud["port"]["fixed_ips"][0]["ip_address"]]
    assert [data(p)["ip_address"] for p in got["allowed_address_pairs"]] == ["10.78.0.200/32"]


def test_an_agent_bulk_pulls_by_id_and_by_security_group(
        aio: tuple[InProcess, Pushes], cloud: dict[str, Any]) -> None:
    client = puller(aio[0])
    by_group = client.call(admin_context(), "bulk_pull", resource_type="Port", version="1.11",
                           filter_kwargs={"security_group_ids": (cloud["group"]["id"],)})
    assert [data(p)["id"] for p in by_group] == [cloud["port"]["id"]]
    rules = client.call(admin_context(), "bulk_pull", resource_type="SecurityGroupRule",
                        version="1.3",
                        filter_kwargs={"security_group_id": (cloud["group"]["id"],)})
    assert "egress" in {data(r)["direction"] for r in rules}
    nets = client.call(admin_context(), "bulk_pull", resource_type="Network", version="1.3",
                       filter_kwargs={"id": (cloud["network"]["id"],)})
    assert [data(data(n)["segments"][0])["network_type"] for n in nets] == ["vxlan"]
    subnets = client.call(admin_context(), "bulk_pull", resource_type="Subnet", version="1.2",
                          filter_kwargs={"network_id": (cloud["network"]["id"],)})
    assert [(data(s)["id"], data(s)["external"]) for s in subnets] == [
        (cloud["subnet"]["id"], False)]
    assert [data(r)["nexthop"] for r in data(subnets[0])["host_routes"]] == ["10.78.0.9"]
    none = client.call(admin_context(), "bulk_pull", resource_type="Port", version="1.11",
                       filter_kwargs={"id": ("00000000-0000-0000-0000-000000000000",)})
    assert none == []


def test_an_unserved_type_or_version_is_refused_not_answered_empty(
        aio: tuple[InProcess, Pushes]) -> None:
    client = puller(aio[0])
    with pytest.raises(Exception, match="not served"):
        client.call(admin_context(), "bulk_pull", resource_type="Trunk", version="1.1",
                    filter_kwargs={})
    with pytest.raises(Exception, match="served at 1.11 only"):
        client.call(admin_context(), "pull", resource_type="Port", version="1.10",
                    resource_id="x")


def test_a_rule_change_pushes_the_rule_and_its_group(
        aio: tuple[InProcess, Pushes], cloud: dict[str, Any]) -> None:
    server, pushes = aio
    rule = server.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": cloud["group"]["id"], "direction": "ingress",
        "protocol": "tcp", "port_range_min": 22, "port_range_max": 22,
        "remote_ip_prefix": "10.0.0.0/8"}})["security_group_rule"]
    pushed = pushes.wait("SecurityGroupRule", "created", rule["id"])
    assert pushed is not None
    assert (data(pushed)["protocol"], data(pushed)["port_range_min"]) == ("tcp", 22)
    group = pushes.wait("SecurityGroup", "updated", cloud["group"]["id"])
    assert group is not None and rule["id"] in {data(r)["id"] for r in data(group)["rules"]}
    assert server.http.simulate_delete(
        f"/v2.0/security-group-rules/{rule['id']}").status_code == 204
    assert pushes.wait("SecurityGroupRule", "deleted", rule["id"]) is not None


def test_a_port_update_and_delete_are_pushed(
        aio: tuple[InProcess, Pushes], cloud: dict[str, Any]) -> None:
    server, pushes = aio
    port = server.post("/v2.0/ports", {"port": {"network_id": cloud["network"]["id"],
                                                "name": "gone"}})["port"]
    assert pushes.wait("Port", "created", port["id"]) is not None
    assert server.http.simulate_put(f"/v2.0/ports/{port['id']}", json={
        "port": {"name": "renamed"}}).status_code == 200
    updated = pushes.wait("Port", "updated", port["id"])
    assert updated is not None and data(updated)["name"] == "renamed"
    assert server.http.simulate_delete(f"/v2.0/ports/{port['id']}").status_code == 204
    assert pushes.wait("Port", "deleted", port["id"]) is not None


def test_an_agents_device_list_pushes_its_ports_in_one_message(
        aio: tuple[InProcess, Pushes], cloud: dict[str, Any]) -> None:
    """``update_device_list`` changes many ports' status: they are re-read
    together and pushed in one ``push``, not one each."""
    server, pushes = aio
    ports = server.post("/v2.0/ports", {"ports": [{
        "network_id": cloud["network"]["id"], "binding:host_id": HOST,
        "device_owner": "compute:nova"} for _ in range(3)]})["ports"]
    ids = [p["id"] for p in ports]
    plugin = oslo_messaging.get_rpc_client(rpc_transport(server.conf), oslo_messaging.Target(
        topic=topics.PLUGIN, version="1.9"), timeout=20)
    plugin.call(admin_context(), "get_devices_details_list", devices=ids, agent_id="a", host=HOST)
    for pid in ids:  # the details made them BUILD: that push first
        assert pushes.wait("Port", "updated", pid, status="BUILD") is not None
    with pushes.seen:
        batches = len(pushes.batches)
    plugin.call(admin_context(), "update_device_list", devices_up=ids, devices_down=[],
                agent_id="a", host=HOST)
    for pid in ids:
        pushed = pushes.wait("Port", "updated", pid, status="ACTIVE")
        assert pushed is not None
    with pushes.seen:
        sent = [b for b in pushes.batches[batches:] if b[0] == "Port"]
    assert [sorted(ids)] == [sorted(b[1]) for b in sent]


# -- against upstream's own classes ----------------------------------------------------

READ_BACK = """
import json, sys
from neutron import objects
objects.register_objects()
from neutron.objects import base
out = {}
for prim in json.load(sys.stdin):
    obj = base.NeutronObject.clean_obj_from_primitive(prim)
    out[obj.obj_name()] = obj.to_dict()
print(json.dumps(out, default=str))
"""

FIELDS = """
import json
from neutron import objects
objects.register_objects()
from neutron.objects import base
reg = base.NeutronObjectRegistry.obj_classes()
print(json.dumps({n: [reg[n][0].VERSION, sorted(reg[n][0].fields)] for n in %r}))
"""


def upstream(script: str, stdin: str = "") -> Any:
    done = subprocess.run([str(UPSTREAM), "-W", "ignore", "-c", script], input=stdin,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def address_group(aio: tuple[InProcess, Pushes], cloud: dict[str, Any]) -> dict[str, Any]:
    server, _ = aio
    group = server.post("/v2.0/address-groups", {"address_group": {
        "name": "peers", "addresses": ["192.0.2.0/28", "2001:db8::1/128"]}})["address_group"]
    rule = server.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": cloud["group"]["id"], "direction": "ingress",
        "remote_address_group_id": group["id"]}})["security_group_rule"]
    return {"group": group, "rule": rule}


def test_an_agent_pulls_an_address_group_and_the_rules_naming_it(
        aio: tuple[InProcess, Pushes], address_group: dict[str, Any]) -> None:
    client = puller(aio[0])
    group_id = address_group["group"]["id"]
    groups = client.call(admin_context(), "bulk_pull", resource_type="AddressGroup",
                         version="1.2", filter_kwargs={"id": (group_id,)})
    assert sorted(data(a)["address"] for a in data(groups[0])["addresses"]) == [
        "192.0.2.0/28", "2001:db8::1/128"]
    rules = client.call(admin_context(), "bulk_pull", resource_type="SecurityGroupRule",
                        version="1.3", filter_kwargs={"remote_address_group_id": (group_id,)})
    assert [data(r)["id"] for r in rules] == [address_group["rule"]["id"]]


@needs_upstream
def test_upstreams_classes_read_address_groups_and_rules(
        aio: tuple[InProcess, Pushes], address_group: dict[str, Any]) -> None:
    client = puller(aio[0])
    prims = [client.call(admin_context(), "pull", resource_type="AddressGroup", version="1.2",
                         resource_id=address_group["group"]["id"]),
             client.call(admin_context(), "pull", resource_type="SecurityGroupRule",
                         version="1.3", resource_id=address_group["rule"]["id"])]
    read = upstream(READ_BACK, json.dumps(prims))
    assert sorted(a["address"] for a in read["AddressGroup"]["addresses"]) == [
        "192.0.2.0/28", "2001:db8::1/128"]
    rule = read["SecurityGroupRule"]
    assert (rule["remote_address_group_id"], rule["direction"], rule["ethertype"]) == (
        address_group["group"]["id"], "ingress", "IPv4")


@needs_upstream
def test_every_declared_object_has_upstreams_version_and_fields() -> None:
    found = upstream(FIELDS % (sorted(OBJECTS.types),))
    declared = {name: [otype.version, sorted(f.name for f in otype.fields)]
                for name, otype in OBJECTS.types.items()}
    assert declared == found


@needs_upstream
def test_upstreams_classes_read_what_the_server_pulls(
        aio: tuple[InProcess, Pushes], cloud: dict[str, Any]) -> None:
    client = puller(aio[0])
    prims = [client.call(admin_context(), "pull", resource_type=rtype,
                         version=OBJECTS[rtype].version, resource_id=cloud[key]["id"])
             for rtype, key in (("Port", "port"), ("Network", "network"),
                                ("Subnet", "subnet"), ("SecurityGroup", "group"))]
    read = upstream(READ_BACK, json.dumps(prims))
    port = read["Port"]
    assert port["mac_address"].lower().replace("-", ":") == cloud["port"]["mac_address"]
    assert port["bindings"][0]["host"] == HOST
    assert port["binding_levels"][-1]["segment"]["network_type"] == "vxlan"
    assert port["security"]["port_security_enabled"] is True
    assert read["Network"]["segments"][0]["segmentation_id"] == (
        cloud["network"]["provider:segmentation_id"])
    assert read["Subnet"]["cidr"] == "10.78.0.0/24"
    assert read["Subnet"]["dns_nameservers"][0]["address"] == "192.0.2.53"
    shown = aio[0].http.simulate_get(f"/v2.0/security-groups/{cloud['group']['id']}").json
    assert {r["id"] for r in read["SecurityGroup"]["rules"]} == {
        r["id"] for r in shown["security_group"]["security_group_rules"]}

