"""The haproxy provider on the server: refusals, placement on load-balancer
agents, casts, what agents are told and what they report."""
from __future__ import annotations

import contextlib
import datetime as dt
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.lb_haproxy import hosting
from neutrino.plugins.lb_haproxy.provider import HaproxyProvider
from neutrino.plugins.lb_haproxy.rpc import LoadBalancerCallbacks
from neutrino.plugins.octavia import provider_api as papi
from neutrino.plugins.octavia.faults import CertificateRetrieval
from neutrino.resources.lb_graph import LoadBalancer
from tests.lbhaproxy import certs
from tests.lbhaproxy import graphs as g


class Db:
    def __init__(self) -> None:
        self.engine = sa.create_engine("sqlite://")
        t.metadata.create_all(self.engine, tables=[t.agents, t.ml2_port_bindings, t.ports,
                                                   t.ipallocations])

    @contextlib.contextmanager
    def reader(self) -> Iterator[sa.Connection]:
        with self.engine.begin() as conn:
            yield conn

    def agent(self, host: str, alive: bool = True, up: bool = True, zone: str = "") -> None:
        now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        beat = now if alive else now - dt.timedelta(hours=1)
        with self.reader() as conn:
            conn.execute(sa.insert(t.agents).values(
                id=str(uuid.uuid4()), agent_type=hosting.AGENT_TYPE, binary="b", topic="t",
                host=host, admin_state_up=up, created_at=now, started_at=now,
                heartbeat_timestamp=beat, configurations="{}", availability_zone=zone))


class Casts:
    enabled = True

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str | None, dict[str, Any]]] = []

    def cast(self, topic: str, method: str, *, server: str | None = None,
             **kw: Any) -> bool:
        self.sent.append((topic, method, server, kw))
        return True


class Core:
    def __init__(self, db: Db) -> None:
        self.db, self.casts = db, Casts()
        self.ports = {g.PORT: {"id": g.PORT, "name": "vip", "network_id": g.NET,
                               "mac_address": "fa:16:3e:0:0:1",
                               "fixed_ips": [{"subnet_id": g.SUBNET, "ip_address": "10.0.0.10"}],
                               "binding:host_id": ""}}

    def update(self, ctx: Any, plural: str, rid: str, data: dict[str, Any]) -> dict[str, Any]:
        assert plural == "ports"
        self.ports[rid].update(data)
        with self.db.reader() as conn:
            conn.execute(sa.delete(t.ml2_port_bindings).where(
                t.ml2_port_bindings.c.port_id == rid))
            conn.execute(sa.insert(t.ml2_port_bindings).values(
                port_id=rid, host=data["binding:host_id"], vif_type="ovs"))
        return self.ports[rid]

    def create(self, ctx: Any, plural: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        made = []
        for item in items:
            pid = str(uuid.uuid4())
            address = f"10.0.0.{200 + len(self.ports)}"
            mac = f"fa:16:3e:0:1:{len(self.ports):02x}"
            port = {**item, "id": pid, "mac_address": mac,
                    "fixed_ips": [{"subnet_id": g.SUBNET, "ip_address": address}]}
            self.ports[pid] = port
            now = dt.datetime.now()
            with self.db.reader() as conn:
                conn.execute(sa.insert(t.ports).values(
                    id=pid, project_id=item["project_id"], name=item["name"],
                    network_id=item["network_id"], mac_address=mac,
                    admin_state_up=True, status="DOWN", device_id=item["device_id"],
                    device_owner=item["device_owner"],
                    created_at=now, updated_at=now))
                conn.execute(sa.insert(t.ipallocations).values(
                    port_id=pid, ip_address=address, subnet_id=g.SUBNET, network_id=g.NET))
            self.update(ctx, plural, pid, {"binding:host_id": item["binding:host_id"]})
            made.append(port)
        return made

    def delete(self, ctx: Any, plural: str, rid: str) -> None:
        self.ports.pop(rid)
        with self.db.reader() as conn:
            conn.execute(sa.delete(t.ports).where(t.ports.c.id == rid))

    def get(self, ctx: Any, plural: str, rid: str) -> dict[str, Any]:
        if plural == "ports":
            return self.ports[rid]
        if plural == "subnets":
            return {"id": rid, "cidr": "10.0.0.0/24", "gateway_ip": "10.0.0.1"}
        return {"id": rid, "mtu": 1450}


class Reporter(papi.StatusReporter):
    def __init__(self, db: Db) -> None:
        self.db, self.core = db, Core(db)
        self.lbs: dict[str, LoadBalancer] = {}
        self.statuses: list[papi.ObjectStatus] = []
        self.stats: list[papi.ListenerStats] = []

    def update_statuses(self, statuses: list[papi.ObjectStatus]) -> None:
        self.statuses += statuses

    def update_stats(self, stats: list[papi.ListenerStats]) -> None:
        self.stats += stats

    def graph(self, loadbalancer_id: str) -> LoadBalancer | None:
        return self.lbs.get(loadbalancer_id)

    def graphs(self, provider: str) -> list[LoadBalancer]:
        return [lb for lb in self.lbs.values() if lb.provider == provider]


class Security:
    """The VIP's security group, recorded (the API tests check the real one)."""

    def __init__(self) -> None:
        self.synced: list[tuple[str, list[str]]] = []
        self.removed: list[str] = []

    def sync(self, lb: LoadBalancer, ports: list[str]) -> None:
        self.synced.append((lb.id, ports))

    def remove(self, lb: LoadBalancer) -> None:
        self.removed.append(lb.id)


@pytest.fixture
def reporter() -> Reporter:
    return Reporter(Db())


def provider(reporter: Reporter, store: Path | None = None) -> HaproxyProvider:
    conf = cfg.ConfigOpts()
    conf([], project="neutrino-test")
    conf.register_opt(cfg.IntOpt("agent_down_time", default=75))
    p = HaproxyProvider(conf, reporter)
    p._security = Security()  # type: ignore[assignment]
    conf.set_override("storage_path", str(store or "/nonexistent"), "certificates")
    p.certs = type(p.certs)(str(store or "/nonexistent"))
    return p


def lb(**kw: Any) -> LoadBalancer:
    return g.loadbalancer(**kw)


def test_what_haproxy_cannot_do_is_refused_before_anything_is_written(
        reporter: Reporter) -> None:
    data = g.graph()
    data["pools"][0]["lb_algorithm"] = "SOURCE_IP_PORT"
    with pytest.raises(papi.UnsupportedOption, match="does not support SOURCE_IP_PORT"):
        provider(reporter).check(LoadBalancer.from_dict(data))
    provider(reporter).check(lb())


def test_only_known_topologies_are_accepted() -> None:
    p = provider(Reporter(Db()))
    with pytest.raises(papi.UnsupportedOption, match="ACTIVE_ACTIVE"):
        p.validate_flavor({"loadbalancer_topology": "ACTIVE_ACTIVE"})
    p.validate_flavor({"loadbalancer_topology": "SINGLE"})
    p.validate_flavor({"loadbalancer_topology": "ACTIVE_STANDBY"})


def test_a_tls_listener_needs_certificates_the_store_has(reporter: Reporter,
                                                          tmp_path: Path) -> None:
    data = g.graph()
    ref = "http://barbican/v1/containers/c1"
    data["listeners"][0].update(protocol="TERMINATED_HTTPS", default_tls_container_ref=ref)
    p = provider(reporter, tmp_path)
    with pytest.raises(CertificateRetrieval) as refused:
        p.check_tls_refs(Context.admin(), [ref], ["ca-missing"])
    assert refused.value.code == 400
    assert refused.value.message == (
        "Could not retrieve certificate: ['http://barbican/v1/containers/c1', 'ca-missing']")
    certs.store(tmp_path, "c1", "www.example.com", passphrase=b"secret")
    p.check_tls_refs(Context.admin(), [ref], [])
    bundle = p.certs.for_listener(LoadBalancer.from_dict(data).listeners[0])
    assert "BEGIN CERTIFICATE" in str(bundle["default"])
    assert "BEGIN PRIVATE KEY" in str(bundle["default"])  # decrypted for haproxy


def test_a_key_of_another_certificate_is_refused(reporter: Reporter, tmp_path: Path) -> None:
    certs.store(tmp_path, "a", "a.example.com")
    certs.store(tmp_path, "b", "b.example.com")
    (tmp_path / "a.key").write_bytes((tmp_path / "b.key").read_bytes())
    with pytest.raises(CertificateRetrieval, match=r"\['a'\]"):
        provider(reporter, tmp_path).check_tls_refs(Context.admin(), ["a"], [])


def test_a_new_load_balancer_goes_to_the_least_loaded_live_agent(reporter: Reporter) -> None:
    reporter.db.agent("busy")
    reporter.db.agent("dead", alive=False)
    reporter.db.agent("off", up=False)
    reporter.db.agent("idle")
    other = LoadBalancer.from_dict({**g.graph(), "id": "other",
                                    "vip": {**g.graph()["vip"], "port_id": "p2"}})
    reporter.core.ports["p2"] = dict(reporter.core.ports[g.PORT], id="p2")
    reporter.lbs["other"] = other
    p = provider(reporter)
    p._bind("p2", "busy")
    new = lb(status="PENDING_CREATE")
    reporter.lbs[g.LB] = new
    p.loadbalancer_create(new)
    assert reporter.core.ports[g.PORT]["binding:host_id"] == "idle"
    assert reporter.core.casts.sent[-1] == ("lbaasv2_agent", "loadbalancer_changed", "idle",
                                            {"loadbalancer_id": g.LB})
    assert p.loadbalancers_on("idle") == [g.LB]


def test_a_compute_zone_places_on_that_zones_agents_only(reporter: Reporter) -> None:
    reporter.db.agent("a-idle", zone="az1")
    reporter.db.agent("b-in-zone", zone="az2")
    p = provider(reporter)
    assert "compute_zone" in p.availability_zone_capabilities()
    p.validate_availability_zone({"compute_zone": "az2"})
    new = LoadBalancer.from_dict({**g.graph(), "provisioning_status": "PENDING_CREATE",
                                  "availability_zone": {"compute_zone": "az2"}})
    reporter.lbs[g.LB] = new
    p.loadbalancer_create(new)
    assert reporter.core.ports[g.PORT]["binding:host_id"] == "b-in-zone"


def test_a_compute_zone_without_a_live_agent_fails_the_change(reporter: Reporter) -> None:
    reporter.db.agent("h1", zone="az1")
    new = LoadBalancer.from_dict({**g.graph(), "provisioning_status": "PENDING_CREATE",
                                  "availability_zone": {"compute_zone": "elsewhere"}})
    reporter.lbs[g.LB] = new
    provider(reporter).loadbalancer_create(new)
    assert {(s.kind, s.provisioning_status) for s in reporter.statuses
            if s.id == g.LB} == {("loadbalancers", "ERROR")}
    assert reporter.core.casts.sent == []


def test_without_a_live_agent_the_change_fails(reporter: Reporter) -> None:
    reporter.db.agent("dead", alive=False)
    new = lb(status="PENDING_CREATE")
    reporter.lbs[g.LB] = new
    provider(reporter).loadbalancer_create(new)
    assert {(s.kind, s.provisioning_status) for s in reporter.statuses
            if s.id == g.LB} == {("loadbalancers", "ERROR")}
    assert reporter.core.casts.sent == []


def test_changes_go_to_the_agent_that_serves_the_load_balancer(reporter: Reporter) -> None:
    reporter.db.agent("h1")
    reporter.db.agent("h2")
    p = provider(reporter)
    reporter.lbs[g.LB] = lb()
    p._bind(g.PORT, "h2")
    p.member_create(lb(status="PENDING_UPDATE"), g.M1)
    assert reporter.core.casts.sent[-1][2] == "h2"


def test_a_failover_moves_off_a_dead_agent_and_tells_both(reporter: Reporter) -> None:
    reporter.db.agent("h1", alive=False)
    reporter.db.agent("h2")
    p = provider(reporter)
    reporter.lbs[g.LB] = lb()
    p._bind(g.PORT, "h1")
    p.move_off_dead_agents()
    assert reporter.core.ports[g.PORT]["binding:host_id"] == "h2"
    sent = [(m, h) for _, m, h, _ in reporter.core.casts.sent]
    assert ("loadbalancer_changed", "h1") in sent
    assert sent[-1] == ("loadbalancer_failover", "h2")


def test_the_agent_gets_the_graph_vip_subnets_and_certificates(reporter: Reporter) -> None:
    reporter.db.agent("h1")
    p = provider(reporter)
    reporter.lbs[g.LB] = lb()
    p._bind(g.PORT, "h1")
    rpc = LoadBalancerCallbacks(p)
    assert rpc.get_ready_devices({}, host="h1") == [g.LB]
    assert rpc.get_ready_devices({}, host="h2") == []
    got = rpc.get_loadbalancer({}, loadbalancer_id=g.LB, host="h1")
    assert got is not None
    assert LoadBalancer.from_dict(got["loadbalancer"]) == lb()
    assert got["vip_port"]["mac_address"] == "fa:16:3e:0:0:1"
    assert got["subnets"][g.SUBNET]["gateway_ip"] == "10.0.0.1" and got["mtu"] == 1450
    assert rpc.get_loadbalancer({}, loadbalancer_id=g.LB, host="h2") is None
    assert rpc.get_loadbalancer({}, loadbalancer_id="gone", host="h1") is None


def test_agent_reports_reach_the_octavia_plugin(reporter: Reporter) -> None:
    reporter.db.agent("h1")
    p = provider(reporter)
    reporter.lbs[g.LB] = lb()
    p._bind(g.PORT, "h1")
    rpc = LoadBalancerCallbacks(p)
    rpc.update_status({}, statuses=[
        {"kind": "members", "id": g.M1, "operating_status": "ERROR"},
        {"kind": "loadbalancers", "id": g.LB, "provisioning_status": "DELETED"},
        {"kind": "bogus", "id": "x", "operating_status": "ONLINE"}])
    assert reporter.statuses == [
        papi.ObjectStatus("members", g.M1, None, "ERROR"),
        papi.ObjectStatus("loadbalancers", g.LB, "DELETED", None)]
    assert reporter.core.ports[g.PORT]["binding:host_id"] == ""  # the VIP is let go
    rpc.update_loadbalancer_stats({}, stats=[{"listener_id": g.LISTENER, "bytes_in": 5}])
    assert reporter.stats == [papi.ListenerStats(g.LISTENER, bytes_in=5)]


def test_monitors_and_policies_the_agent_made_active_are_online(reporter: Reporter) -> None:
    reporter.db.agent("h1")
    p = provider(reporter)
    reporter.lbs[g.LB] = lb()
    p._bind(g.PORT, "h1")
    LoadBalancerCallbacks(p).update_status({}, statuses=[
        {"kind": "healthmonitors", "id": g.HM, "provisioning_status": "ACTIVE"},
        {"kind": "l7policies", "id": g.POLICY, "provisioning_status": "ACTIVE"},
        {"kind": "loadbalancers", "id": g.LB, "provisioning_status": "ACTIVE"}])
    assert reporter.statuses[:2] == [
        papi.ObjectStatus("healthmonitors", g.HM, "ACTIVE", "ONLINE"),
        papi.ObjectStatus("l7policies", g.POLICY, "ACTIVE", "ONLINE")]


NEW_MEMBER = "66666666-6666-4666-8666-666666666664"


def _reported(reporter: Reporter, data: dict[str, Any],
              statuses: list[dict[str, Any]]) -> dict[str, str | None]:
    """The operating statuses the plugin was given for ``statuses`` reported
    by the agent serving the load balancer ``data``."""
    reporter.db.agent("h1")
    p = provider(reporter)
    reporter.lbs[g.LB] = LoadBalancer.from_dict(data)
    p._bind(g.PORT, "h1")
    LoadBalancerCallbacks(p).update_status({}, statuses=statuses)
    return {st.id: st.operating_status for st in reporter.statuses}


def test_a_new_member_without_monitor_is_no_monitor_once_active(reporter: Reporter) -> None:
    data = g.graph()
    data["pools"][1]["members"].append(g.member(NEW_MEMBER, "10.0.3.6", pool=g.STATIC,
                                                provisioning_status="PENDING_CREATE",
                                                admin_state_up=False))
    got = _reported(reporter, data, [
        {"kind": "members", "id": NEW_MEMBER, "provisioning_status": "ACTIVE"},
        {"kind": "pools", "id": g.STATIC, "provisioning_status": "ACTIVE"},
        {"kind": "loadbalancers", "id": g.LB, "provisioning_status": "ACTIVE"}])
    # the disabled new member OFFLINE, its unmonitored neighbour NO_MONITOR at once
    assert got[NEW_MEMBER] == "OFFLINE" and got[g.M3] == "NO_MONITOR"
    assert reporter.statuses[0] == papi.ObjectStatus("members", NEW_MEMBER, "ACTIVE", "OFFLINE")
    # members a health monitor watches wait for its checks
    assert g.M1 not in got and g.M2 not in got


def test_members_of_a_deleted_monitor_are_no_monitor_once_it_is_gone(reporter: Reporter) -> None:
    data = g.graph()
    data["pools"][0]["healthmonitor"]["provisioning_status"] = "PENDING_DELETE"
    got = _reported(reporter, data, [
        {"kind": "healthmonitors", "id": g.HM, "provisioning_status": "DELETED"},
        {"kind": "loadbalancers", "id": g.LB, "provisioning_status": "ACTIVE"}])
    assert got[g.M1] == got[g.M2] == "NO_MONITOR"


def test_health_readings_are_passed_on_as_they_are(reporter: Reporter) -> None:
    got = _reported(reporter, g.graph(), [
        {"kind": "members", "id": g.M3, "operating_status": "DRAINING"},
        {"kind": "loadbalancers", "id": g.LB, "operating_status": "ONLINE"}])
    assert got == {g.M3: "DRAINING", g.LB: "ONLINE"}


def test_active_standby_gets_a_vrrp_port_on_each_of_two_hosts(reporter: Reporter) -> None:
    reporter.db.agent("h1")
    reporter.db.agent("h2")
    reporter.db.agent("h3", alive=False)
    p = provider(reporter)
    pair = lb(flavor={"loadbalancer_topology": "ACTIVE_STANDBY"})
    reporter.lbs[g.LB] = pair
    p.loadbalancer_create(pair)
    vrrp_ports = [x for x in reporter.core.ports.values() if x["name"].startswith("octavia-lb-vrrp")]
    assert sorted(x["binding:host_id"] for x in vrrp_ports) == ["h1", "h2"]
    assert all(x["allowed_address_pairs"] == [{"ip_address": "10.0.0.10"}] for x in vrrp_ports)
    assert reporter.core.ports[g.PORT]["binding:host_id"] == ""  # the VIP only holds the address
    assert sorted(h for _, _, h, _ in reporter.core.casts.sent) == ["h1", "h2"]
    rpc = LoadBalancerCallbacks(p)
    assert rpc.get_ready_devices({}, host="h2") == [g.LB]
    first = rpc.get_loadbalancer({}, loadbalancer_id=g.LB, host="h1")
    second = rpc.get_loadbalancer({}, loadbalancer_id=g.LB, host="h2")
    assert first and second
    assert first["vrrp"]["priority"] == 100 and second["vrrp"]["priority"] == 90
    assert first["vrrp"]["peers"] == [second["vip_port"]["fixed_ips"][0]["ip_address"]]
    assert first["vrrp"]["vip"] == "10.0.0.10"
    rpc.update_status({}, statuses=[{"kind": "loadbalancers", "id": g.LB,
                                     "provisioning_status": "DELETED"}])
    assert not [x for x in reporter.core.ports.values() if x["name"].startswith("octavia-lb")]


def test_active_standby_needs_two_live_agents(reporter: Reporter) -> None:
    reporter.db.agent("h1")
    pair = lb(status="PENDING_CREATE", flavor={"loadbalancer_topology": "ACTIVE_STANDBY"})
    reporter.lbs[g.LB] = pair
    provider(reporter).loadbalancer_create(pair)
    assert [s.provisioning_status for s in reporter.statuses if s.id == g.LB] == ["ERROR"]
