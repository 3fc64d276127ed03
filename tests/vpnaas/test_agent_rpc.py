"""What L3 agents' ``vpnaas`` extensions see over the bus: upstream's casts on
``ipsec_agent`` after VPN changes, the services of their routers on
``ipsec_driver`` (``get_vpn_services_on_host``) and the statuses they report
(``update_status``), after which connections and services can be updated."""
from __future__ import annotations

import threading
import uuid
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.rpc.transport import rpc_transport
from tests.conftest import Client, Server
from tests.l3 import _l3
from tests.l3agent.conftest import l3_agents, start_server  # noqa: F401 - fixtures
from tests.rpc.conftest import vhost  # noqa: F401 - the module's own vhost

VPN = "/v2.0/vpn"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("vpnrpc"), vhost,
                          "router_auto_schedule = true\nservice_plugins = router,vpnaas\n")
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, uuid.uuid4().hex, roles="admin")


@pytest.fixture
def member(srv: Server) -> Client:
    return Client(srv.url, uuid.uuid4().hex, roles="member,reader")


class Updates:
    """The ``vpnservice_updated`` casts one agent receives."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self) -> None:
        self.routers: list[str] = []
        self.seen = threading.Condition()

    def vpnservice_updated(self, context: Any, router: Any = None, **kwargs: Any) -> None:
        with self.seen:
            self.routers.append(router["id"])
            self.seen.notify_all()

    def wait_for(self, router_id: str, timeout: float = 20) -> bool:
        with self.seen:
            return self.seen.wait_for(lambda: router_id in self.routers, timeout)


def _driver(agent: Any) -> Any:
    transport = rpc_transport(agent.conf)
    agent.driver_transport = transport
    return oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic="ipsec_driver", version="1.0")).prepare(timeout=30)


def _made(client: Client, plural: str, key: str, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(f"{VPN}/{plural}", {key: attrs})
    assert status == 201, body
    return dict(body[key])


def test_the_hosting_agent_runs_a_service_and_reports_its_statuses(
        admin: Client, member: Client, l3_agents: Any) -> None:  # noqa: F811
    agent = l3_agents(report_interval=2)
    updates = Updates()
    agent.listen("ipsec_agent", [updates])
    driver = _driver(agent)
    try:
        ext, _ = _l3.external_network(admin)
        sub = _l3.private_subnet(member)
        router = _l3.router(member, external_gateway_info={"network_id": ext["id"]})
        _l3.add_interface(member, router["id"], subnet_id=sub["id"])
        gw_ip = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
        service = _made(member, "vpnservices", "vpnservice", router_id=router["id"],
                        subnet_id=sub["id"])
        ike = _made(member, "ikepolicies", "ikepolicy", auth_algorithm="sha256")
        ipsec = _made(member, "ipsecpolicies", "ipsecpolicy", pfs="group14")
        conn = _made(member, "ipsec-site-connections", "ipsec_site_connection",
                     vpnservice_id=service["id"], ikepolicy_id=ike["id"],
                     ipsecpolicy_id=ipsec["id"], peer_address="172.24.9.9",
                     peer_id="peer.example.org", psk="k", peer_cidrs=["10.200.0.0/24"])
        assert updates.wait_for(router["id"])

        elsewhere = l3_agents()  # made once the router is the first agent's
        assert driver.call({}, "get_vpn_services_on_host", host=elsewhere.host) == []
        [seen] = driver.call({}, "get_vpn_services_on_host", host=agent.host)
        assert (seen["id"], seen["router_id"], seen["external_v4_ip"], seen["status"]) == (
            service["id"], router["id"], gw_ip, "PENDING_CREATE")
        [c] = seen["ipsec_site_connections"]
        assert {k: c[k] for k in ("id", "local_cidrs", "peer_cidrs", "peer_id", "external_ip",
                                  "psk", "peer_address")} == {
            "id": conn["id"], "local_cidrs": [sub["cidr"]], "peer_cidrs": ["10.200.0.0/24"],
            "peer_id": "@peer.example.org", "external_ip": gw_ip, "psk": "k",
            "peer_address": "172.24.9.9"}
        assert (c["ikepolicy"]["auth_algorithm"], c["ipsecpolicy"]["pfs"]) == ("sha256", "group14")

        status, body = member.put(f"{VPN}/ipsec-site-connections/{conn['id']}",
                                  {"ipsec_site_connection": {"psk": "other"}})
        assert (status, body["NeutronError"]["type"]) == (400, "VPNStateInvalidToUpdate")

        driver.call({}, "update_status", status=[{
            "id": service["id"], "status": "ACTIVE", "updated_pending_status": True,
            "ipsec_site_connections": {conn["id"]: {"status": "DOWN",
                                                    "updated_pending_status": True}}}])
        assert member.get(f"{VPN}/vpnservices/{service['id']}")[1]["vpnservice"][
            "status"] == "ACTIVE"
        assert member.get(f"{VPN}/ipsec-site-connections/{conn['id']}")[1][
            "ipsec_site_connection"]["status"] == "DOWN"

        # no longer pending: updates are checked as a whole, then made
        url = f"{VPN}/ipsec-site-connections/{conn['id']}"
        for attrs, error in (
                ({"peer_cidrs": ["2001:db8::/64"]}, "MixedIPVersionsForIPSecConnection"),
                ({"peer_cidrs": []}, "MissingPeerCidrs"),
                ({"dpd": {"timeout": 10}}, "IPsecSiteConnectionDpdIntervalValueError"),
                ({"mtu": 10}, "IPsecSiteConnectionMtuError")):
            status, body = member.put(url, {"ipsec_site_connection": attrs})
            assert (status, body["NeutronError"]["type"]) == (400, error), attrs
        updates.routers.clear()
        status, body = member.put(url, {"ipsec_site_connection": {
            "psk": "other", "peer_cidrs": ["10.201.0.0/24", "10.202.0.0/24"],
            "dpd": {"action": "restart", "interval": 10, "timeout": 40}}})
        assert status == 200, body
        got = body["ipsec_site_connection"]
        assert (got["psk"], got["peer_cidrs"], got["dpd"]) == (
            "other", ["10.201.0.0/24", "10.202.0.0/24"],
            {"action": "restart", "interval": 10, "timeout": 40})
        assert updates.wait_for(router["id"])
        status, body = member.put(f"{VPN}/vpnservices/{service['id']}",
                                  {"vpnservice": {"name": "renamed", "admin_state_up": False}})
        assert status == 200 and body["vpnservice"]["name"] == "renamed", body
        assert member.delete(f"{VPN}/ipsec-site-connections/{conn['id']}")[0] == 204
        assert driver.call({}, "get_vpn_services_on_host", host=agent.host) == []

        # endpoint groups: the local group's subnets' CIDRs, the peer group's CIDRs
        local = _made(member, "endpoint-groups", "endpoint_group", type="subnet",
                      endpoints=[sub["id"]])
        peer = _made(member, "endpoint-groups", "endpoint_group", type="cidr",
                     endpoints=["10.210.0.0/24", "10.211.0.0/24"])
        by_groups = _made(member, "vpnservices", "vpnservice", router_id=router["id"])
        grouped = _made(member, "ipsec-site-connections", "ipsec_site_connection",
                        vpnservice_id=by_groups["id"], ikepolicy_id=ike["id"],
                        ipsecpolicy_id=ipsec["id"], peer_address="172.24.9.9",
                        peer_id="172.24.9.9", psk="k", local_ep_group_id=local["id"],
                        peer_ep_group_id=peer["id"])
        [seen] = driver.call({}, "get_vpn_services_on_host", host=agent.host)
        [c] = seen["ipsec_site_connections"]
        assert (seen["id"], c["id"], c["local_cidrs"], c["peer_cidrs"], c["peer_id"]) == (
            by_groups["id"], grouped["id"], [sub["cidr"]], ["10.210.0.0/24", "10.211.0.0/24"],
            "172.24.9.9")
    finally:
        agent.driver_transport.cleanup()
