"""The load-balancer agent's plan: what the host must look like and what to do."""
from __future__ import annotations

from neutrino.agents.loadbalancer import plan
from tests.lbhaproxy import graphs as g

STATE = "/var/lib/lbaas/" + g.LB


def want(**kw: object) -> plan.Deployment:
    deployment = plan.deployment(g.payload(**kw), STATE)
    assert deployment is not None
    return deployment


def test_the_vip_port_is_plugged_in_the_load_balancers_namespace() -> None:
    d = want()
    assert d.namespace == f"qlbaas-{g.LB}"
    assert d.device == ("tap" + g.PORT)[:14]
    assert d.mac_address == "fa:16:3e:00:00:10" and d.mtu == 1450
    assert d.addresses == ("10.0.0.10/24",)
    assert d.gateways == ("10.0.0.1",)
    assert "bind 10.0.0.10:80" in d.config


def test_certificates_are_written_where_the_configuration_reads_them() -> None:
    p = g.payload()
    p["certificates"] = {g.LISTENER: {"default": "PEM", "sni": ["SNI0"]}}
    d = plan.deployment(p, STATE)
    assert d is not None
    assert dict(d.files) == {f"certs/{g.LISTENER}/default.pem": "PEM",
                             f"certs/{g.LISTENER}/sni/0.pem": "SNI0"}
    assert plan.files_for(STATE).listener_file(g.LISTENER, "default.pem") == (
        f"{STATE}/certs/{g.LISTENER}/default.pem")


def test_a_certificate_replaced_under_the_same_path_changes_the_configuration() -> None:
    def config(pem: str) -> str:
        p = g.payload()
        p["certificates"] = {g.LISTENER: {"default": pem}}
        d = plan.deployment(p, STATE)
        assert d is not None
        return d.config
    assert config("OLD") == config("OLD")
    assert config("OLD") != config("NEW")  # so the agent reloads haproxy with it


def test_a_tls_pools_certificates_are_written_where_its_servers_read_them() -> None:
    p = g.payload()
    p["pool_certificates"] = {g.POOL: {"client": "BUNDLE", "ca": "CA", "crl": "CRL"}}
    d = plan.deployment(p, STATE)
    assert d is not None
    files = plan.files_for(STATE)
    assert {f"{STATE}/{rel}": text for rel, text in d.files} == {
        files.pool_file(g.POOL, "client"): "BUNDLE", files.pool_file(g.POOL, "ca"): "CA",
        files.pool_file(g.POOL, "crl"): "CRL"}


def test_a_load_balancer_being_deleted_wants_nothing() -> None:
    assert plan.deployment(g.payload(status="PENDING_DELETE"), STATE) is None


def test_new_is_built_changed_is_reloaded_same_is_left_alone() -> None:
    d = want()
    assert plan.plan({g.LB: d}, {}) == [plan.Build(d)]
    same = plan.Observed(namespace=True, running=True, config=d.config, device=d.device)
    assert plan.plan({g.LB: d}, {g.LB: same}) == []
    old = plan.Observed(namespace=True, running=True, config="old", device=d.device)
    assert plan.plan({g.LB: d}, {g.LB: old}) == [plan.Reload(d)]


def test_a_dead_haproxy_or_missing_namespace_is_built_again() -> None:
    d = want()
    dead = plan.Observed(namespace=True, running=False, config=d.config, device=d.device)
    assert plan.plan({g.LB: d}, {g.LB: dead}) == [plan.Build(d)]


def test_a_failover_or_another_vip_device_rebuilds_from_nothing() -> None:
    d = want()
    same = plan.Observed(namespace=True, running=True, config=d.config, device=d.device)
    assert plan.plan({g.LB: d}, {g.LB: same}, frozenset({g.LB})) == [
        plan.Teardown(g.LB, d.device), plan.Build(d)]
    moved = plan.Observed(namespace=True, running=True, config=d.config, device="tapold")
    assert plan.plan({g.LB: d}, {g.LB: moved}) == [plan.Teardown(g.LB, "tapold"), plan.Build(d)]


def test_what_is_not_wanted_is_torn_down() -> None:
    seen = plan.Observed(namespace=True, running=True, config="x", device="tapx")
    assert plan.plan({g.LB: None}, {g.LB: seen}) == [plan.Teardown(g.LB, "tapx")]
    assert plan.plan({}, {"other": seen}) == [plan.Teardown("other", "tapx")]
    assert plan.plan({g.LB: None}, {}) == []


def test_provisioned_reports_pending_objects_done() -> None:
    lb = g.loadbalancer(status="PENDING_UPDATE")
    done = {(s["kind"], s["id"]): s["provisioning_status"] for s in plan.provisioned(lb)}
    assert done[("loadbalancers", g.LB)] == "ACTIVE"
    assert done[("members", g.M1)] == "ACTIVE"
    assert done[("l7rules", g.RULE)] == "ACTIVE"
    failed = plan.provisioned(lb, failed=True)
    assert {s["provisioning_status"] for s in failed} == {"ERROR"}
    gone = plan.provisioned(g.loadbalancer(status="PENDING_DELETE"))
    assert {s["provisioning_status"] for s in gone} == {"DELETED"}
    assert plan.provisioned(g.loadbalancer()) == []


def test_an_active_standby_host_runs_keepalived_for_the_vip() -> None:
    payload = g.payload()
    payload["vrrp"] = {"vip": "10.0.0.10", "router_id": 7, "priority": 90,
                       "peers": ["10.0.0.31"]}
    payload["vip_port"]["fixed_ips"][0]["ip_address"] = "10.0.0.32"
    d = plan.deployment(payload, STATE)
    assert d is not None and d.keepalived is not None
    assert d.addresses == ("10.0.0.32/24",) and d.vip == "10.0.0.10"
    assert "bind 10.0.0.10:80" in d.config  # haproxy binds the VIP it may not hold
    lines = [line.strip() for line in d.keepalived.splitlines()]
    for line in ("virtual_router_id 7", "priority 90", "unicast_src_ip 10.0.0.32",
                 "10.0.0.31", f"10.0.0.10/24 dev {d.device}", "nopreempt"):
        assert line in lines
    seen = plan.Observed(namespace=True, running=True, config=d.config, device=d.device)
    assert plan.plan({g.LB: d}, {g.LB: seen}) == [plan.Build(d)]  # keepalived missing
    both = plan.Observed(namespace=True, running=True, config=d.config, device=d.device,
                         keepalived=d.keepalived)
    assert plan.plan({g.LB: d}, {g.LB: both}) == []
    moved = plan.Observed(namespace=True, running=True, config=d.config, device=d.device,
                          keepalived="old")
    assert plan.plan({g.LB: d}, {g.LB: moved}) == [plan.Reload(d)]


def test_a_stats_socket_too_deep_for_a_unix_path_moves_to_a_short_directory() -> None:
    assert plan.files_for(STATE).stats_socket == f"{STATE}/haproxy.sock"
    deep = "/tmp/" + "d" * 80 + "/" + g.LB
    assert plan.files_for(deep).stats_socket == f"/run/neutrino-lbaas/{g.LB}.sock"
