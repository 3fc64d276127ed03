"""The haproxy configuration rendered from a load balancer's graph."""
from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from neutrino.agents.loadbalancer import haproxy_config as hc
from neutrino.resources import lb_haproxy
from neutrino.resources.lb_graph import LoadBalancer
from tests.lbhaproxy import certs
from tests.lbhaproxy import graphs as g

FILES = hc.Files("/run/lb/haproxy.sock", "/run/lb/ping.sh", "/run/lb/certs")


def render(data: dict[str, Any]) -> str:
    return hc.render(LoadBalancer.from_dict(data), FILES)


def section(text: str, header: str) -> list[str]:
    """The lines of one section (``frontend <id>``, ``backend <name>``)."""
    lines = text.splitlines()
    start = lines.index(header)
    out = []
    for line in lines[start + 1:]:
        if not line.startswith("    "):
            break
        out.append(line.strip())
    return out


def haproxy_accepts(text: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    path = tmp / "haproxy.cfg"
    path.write_text(text.replace("/run/lb", str(tmp)))
    return subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True, text=True)


needs_haproxy = pytest.mark.skipif(shutil.which("haproxy") is None,
                                   reason="Debian's haproxy is not installed")


def _variant(pool: dict[str, Any], listener: dict[str, Any] | None = None,
             monitor: dict[str, Any] | None = None) -> dict[str, Any]:
    data = g.graph()
    data["pools"][0].update(pool)
    data["listeners"][0].update(listener or {})
    data["pools"][0]["healthmonitor"].update(monitor or {})
    return data


@needs_haproxy
@pytest.mark.parametrize("data", [
    g.graph(),
    _variant({"session_persistence": {"type": "APP_COOKIE", "cookie_name": "sid"}},
             {"allowed_cidrs": ["10.0.0.0/8"], "connection_limit": 10},
             {"type": "PING"}),
    _variant({"session_persistence": {"type": "HTTP_COOKIE"}, "lb_algorithm": "SOURCE_IP"},
             {"insert_headers": {"X-Forwarded-Port": "true", "X-Forwarded-Proto": "true"}},
             {"type": "HTTPS", "http_version": 1.1, "domain_name": "example.com"}),
    _variant({"session_persistence": {"type": "SOURCE_IP", "persistence_timeout": 60}},
             {"protocol": "TCP", "l7policies": []}, {"type": "TLS-HELLO"}),
], ids=["http", "app-cookie-ping", "cookie-https-check", "tcp-source-ip"])
def test_haproxy_accepts_the_rendered_configuration(data: dict[str, Any], tmp_path: Path) -> None:
    if data["listeners"][0]["protocol"] == "TCP":
        for pool in data["pools"]:
            pool["protocol"] = "TCP"
    done = haproxy_accepts(render(data), tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_listener_is_a_frontend_on_the_vip_sending_to_its_default_pool() -> None:
    front = section(render(g.graph()), f"frontend {g.LISTENER}")
    assert "bind 10.0.0.10:80" in front
    assert "mode http" in front
    assert "maxconn 100" in front
    assert "timeout client 50000" in front
    assert f"default_backend {g.POOL}:{g.LISTENER}" in front


def test_each_pool_a_listener_uses_is_a_backend_of_that_listener() -> None:
    text = render(g.graph())
    back = section(text, f"backend {g.POOL}:{g.LISTENER}")
    assert "balance roundrobin" in back
    assert "timeout connect 5000" in back and "timeout server 50000" in back
    assert "option forwardfor" in back
    assert f"server {g.M1} 10.0.1.5:80 weight 1 check inter 1s fall 2 rise 2" in back
    static = section(text, f"backend {g.STATIC}:{g.LISTENER}")
    assert "balance leastconn" in static
    assert f"server {g.M3} 10.0.3.5:80 weight 1" in static  # no monitor: no check


def test_source_ip_algorithm_balances_on_the_source() -> None:
    data = g.graph()
    data["pools"][0]["lb_algorithm"] = "SOURCE_IP"
    assert "balance source" in section(render(data), f"backend {g.POOL}:{g.LISTENER}")


def test_http_monitor_checks_the_url_and_the_expected_codes() -> None:
    back = section(render(g.graph()), f"backend {g.POOL}:{g.LISTENER}")
    assert "option httpchk" in back
    assert "http-check send meth GET uri /health" in back
    assert "http-check expect rstatus ^(200|201|202)$" in back
    assert "timeout check 1s" in back


@pytest.mark.parametrize(("codes", "expect"), [
    ("200", "status 200"), ("200,202", "rstatus ^(200|202)$"),
    ("200-202,204", "rstatus ^(200|201|202|204)$"), (None, "status 200")])
def test_expected_codes(codes: str | None, expect: str) -> None:
    assert hc.expected_statuses(codes) == expect


def test_tcp_and_ping_and_tls_hello_monitors() -> None:
    data = g.graph()
    data["pools"][0]["healthmonitor"]["type"] = "PING"
    text = render(data)
    assert "    external-check" in text.splitlines()  # global
    back = section(text, f"backend {g.POOL}:{g.LISTENER}")
    assert f"external-check command {FILES.ping_script}" in back
    data["pools"][0]["healthmonitor"]["type"] = "TCP"
    back = section(render(data), f"backend {g.POOL}:{g.LISTENER}")
    assert not any("httpchk" in line or "external" in line for line in back)
    assert any(line.startswith(f"server {g.M1}") and " check " in line for line in back)
    data["pools"][0]["healthmonitor"]["type"] = "TLS-HELLO"
    assert "option ssl-hello-chk" in section(render(data), f"backend {g.POOL}:{g.LISTENER}")


@pytest.mark.parametrize(("persistence", "wanted"), [
    ({"type": "SOURCE_IP"}, ["stick-table type ip size 10k", "stick on src"]),
    ({"type": "HTTP_COOKIE"}, ["cookie SRV insert indirect nocache"]),
    ({"type": "APP_COOKIE", "cookie_name": "sid"},
     ["stick store-response res.cook(sid)", "stick match req.cook(sid)"])])
def test_session_persistence(persistence: dict[str, str], wanted: list[str]) -> None:
    data = g.graph()
    data["pools"][0]["session_persistence"] = persistence
    back = section(render(data), f"backend {g.POOL}:{g.LISTENER}")
    for line in wanted:
        assert line in back
    if persistence["type"] == "HTTP_COOKIE":
        assert any(line.endswith(f"cookie {g.M1}") for line in back)


def test_l7_policies_route_and_redirect_in_position_order() -> None:
    front = section(render(g.graph()), f"frontend {g.LISTENER}")
    assert f'acl rule_{g.RULE} path -m beg "/static/"' in front
    assert (f"use_backend {g.STATIC}:{g.LISTENER} if rule_{g.RULE}") in front
    redirect = f"http-request redirect location http://example.com/new code 301 if rule_{g.RULE2}"
    assert redirect in front
    assert front.index(redirect) < front.index(f"default_backend {g.POOL}:{g.LISTENER}")


def test_l7_reject_with_inverted_header_and_host_cookie_file_type_rules() -> None:
    data = g.graph()
    policy = data["listeners"][0]["l7policies"][1]
    policy.update(action="REJECT", rules=[
        {"id": "r1", "l7policy_id": g.REDIRECT, "type": "HEADER", "key": "X-Key",
         "compare_type": "EQUAL_TO", "value": "secret", "invert": True},
        {"id": "r2", "l7policy_id": g.REDIRECT, "type": "HOST_NAME",
         "compare_type": "ENDS_WITH", "value": ".example.com"},
        {"id": "r3", "l7policy_id": g.REDIRECT, "type": "COOKIE", "key": "user",
         "compare_type": "REGEX", "value": "^adm"},
        {"id": "r4", "l7policy_id": g.REDIRECT, "type": "FILE_TYPE",
         "compare_type": "EQUAL_TO", "value": "jpg"}])
    front = section(render(data), f"frontend {g.LISTENER}")
    assert 'acl rule_r1 req.hdr(X-Key) -m str "secret"' in front
    assert 'acl rule_r2 req.hdr(host),field(1,:) -i -m end ".example.com"' in front
    assert 'acl rule_r3 req.cook(user) -m reg "^adm"' in front
    assert 'acl rule_r4 path_end -m str ".jpg"' in front
    assert "http-request deny deny_status 403 if !rule_r1 rule_r2 rule_r3 rule_r4" in front


def test_a_policy_without_rules_or_down_does_nothing() -> None:
    data = g.graph()
    data["listeners"][0]["l7policies"][0]["rules"] = []
    data["listeners"][0]["l7policies"][1]["admin_state_up"] = False
    front = section(render(data), f"frontend {g.LISTENER}")
    assert not [line for line in front if "use_backend" in line or "redirect" in line]


def test_what_is_being_deleted_is_left_out() -> None:
    data = g.graph()
    data["pools"][0]["members"][1]["provisioning_status"] = "PENDING_DELETE"
    data["pools"][0]["healthmonitor"]["provisioning_status"] = "PENDING_DELETE"
    back = section(render(data), f"backend {g.POOL}:{g.LISTENER}")
    assert not any(g.M2 in line for line in back)
    assert not any("check" in line for line in back)
    data["listeners"][0]["provisioning_status"] = "PENDING_DELETE"
    assert "frontend" not in render(data)


def test_members_disabled_backup_weight_and_monitor_address() -> None:
    data = g.graph()
    data["pools"][0]["members"][0].update(admin_state_up=False, weight=5)
    data["pools"][0]["members"][1].update(backup=True, monitor_address="10.0.9.9",
                                          monitor_port=8080)
    back = section(render(data), f"backend {g.POOL}:{g.LISTENER}")
    m1 = next(line for line in back if g.M1 in line)
    m2 = next(line for line in back if g.M2 in line)
    assert "weight 5" in m1 and m1.endswith("disabled")
    assert m2.endswith("backup") and "addr 10.0.9.9 port 8080" in m2


def test_listener_limits_timeouts_cidrs_and_headers() -> None:
    data = g.graph()
    data["listeners"][0].update(
        connection_limit=-1, timeout_client_data=1000, timeout_member_connect=200,
        timeout_member_data=3000, allowed_cidrs=["192.0.2.0/24", "10.0.0.0/8"],
        insert_headers={"X-Forwarded-Port": "true", "X-Forwarded-Proto": "True"})
    text = render(data)
    front = section(text, f"frontend {g.LISTENER}")
    assert "maxconn 50000" in front and "timeout client 1000" in front
    assert "acl allowed-cidrs src 192.0.2.0/24 10.0.0.0/8" in front
    assert "tcp-request connection reject unless allowed-cidrs" in front
    back = section(text, f"backend {g.POOL}:{g.LISTENER}")
    assert "timeout connect 200" in back and "timeout server 3000" in back
    assert "http-request set-header X-Forwarded-Port %[dst_port]" in back
    assert "http-request set-header X-Forwarded-Proto http" in back
    assert "option forwardfor" not in back


def test_terminated_https_binds_its_certificates() -> None:
    data = g.graph()
    data["listeners"][0].update(protocol="TERMINATED_HTTPS", protocol_port=443,
                                default_tls_container_ref="ref", sni_container_refs=["sni"],
                                insert_headers={"X-Forwarded-Proto": "true"},
                                hsts_max_age=100)
    text = render(data)
    front = section(text, f"frontend {g.LISTENER}")
    assert (f"bind 10.0.0.10:443 ssl crt {FILES.listener_file(g.LISTENER, 'default.pem')} "
            f"crt {FILES.listener_file(g.LISTENER, 'sni')}") in front
    assert "mode http" in front
    assert 'http-response set-header Strict-Transport-Security "max-age=100;"' in front
    assert "http-request set-header X-Forwarded-Proto https" in section(
        text, f"backend {g.POOL}:{g.LISTENER}")


def _crl(ca_pem: bytes, key_pem: bytes) -> bytes:
    ca = x509.load_pem_x509_certificate(ca_pem)
    key = serialization.load_pem_private_key(key_pem, None)
    now = dt.datetime.now(dt.timezone.utc)
    crl = (x509.CertificateRevocationListBuilder().issuer_name(ca.subject)
           .last_update(now).next_update(now + dt.timedelta(days=1))
           .sign(key, hashes.SHA256()))  # type: ignore[arg-type]
    return crl.public_bytes(serialization.Encoding.PEM)


@needs_haproxy
def test_a_tls_pool_presents_its_certificate_and_verifies_its_members(tmp_path: Path) -> None:
    data = g.graph()
    data["pools"][0].update(tls_enabled=True, tls_container_ref="client",
                            ca_tls_container_ref="ca", crl_container_ref="crl")
    text = render(data)
    servers = [line for line in section(text, f"backend {g.POOL}:{g.LISTENER}")
               if line.startswith("server")]
    assert servers and all(
        f" ssl crt {FILES.pool_file(g.POOL, 'client')} verify required ca-file "
        f"{FILES.pool_file(g.POOL, 'ca')} crl-file {FILES.pool_file(g.POOL, 'crl')}" in line
        for line in servers)
    client_cert, client_key = certs.make("client.example.com")
    ca, ca_key = certs.make("ca.example.com")
    pools = tmp_path / "certs" / "pools" / g.POOL
    pools.mkdir(parents=True)
    (pools / "client.pem").write_bytes(client_cert + client_key)
    (pools / "ca.pem").write_bytes(ca)
    (pools / "crl.pem").write_bytes(_crl(ca, ca_key))
    done = haproxy_accepts(text, tmp_path)
    assert done.returncode == 0, done.stderr
    data["pools"][0].update(tls_container_ref=None, ca_tls_container_ref=None,
                            crl_container_ref=None)
    back = section(render(data), f"backend {g.POOL}:{g.LISTENER}")
    assert all(" ssl verify none" in line for line in back if line.startswith("server"))


def test_tcp_listener_is_a_tcp_frontend() -> None:
    data = g.graph()
    data["listeners"][0].update(protocol="TCP", l7policies=[], timeout_tcp_inspect=500)
    for pool in data["pools"]:
        pool["protocol"] = "TCP"
    text = render(data)
    assert "mode tcp" in section(text, f"frontend {g.LISTENER}")
    assert "tcp-request inspect-delay 500" in section(text, f"frontend {g.LISTENER}")
    assert "option forwardfor" not in section(text, f"backend {g.POOL}:{g.LISTENER}")


def test_proxy_pools_send_the_proxy_protocol() -> None:
    data = g.graph()
    data["pools"][0]["protocol"] = "PROXYV2"
    back = section(render(data), f"backend {g.POOL}:{g.LISTENER}")
    assert all(line.endswith("send-proxy-v2") for line in back if line.startswith("server"))


def test_a_load_balancer_down_serves_nothing() -> None:
    assert "frontend" not in render(g.graph(admin_state_up=False))


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["listeners"][0].update(protocol="QUIC"),
     "haproxy provider does not support QUIC listeners."),
    (lambda d: d["pools"][0].update(protocol="QUIC"),
     "haproxy provider does not support QUIC pools."),
    (lambda d: d["pools"][0].update(lb_algorithm="SOURCE_IP_PORT"),
     "haproxy provider does not support SOURCE_IP_PORT algorithm."),
    (lambda d: d["pools"][0]["healthmonitor"].update(type="UDP-CONNECT"),
     "haproxy provider does not support UDP-CONNECT health monitors."),
    (lambda d: d["pools"][0].update(protocol="UDP", lb_algorithm="SOURCE_IP_PORT",
                                    healthmonitor=dict(d["pools"][0]["healthmonitor"],
                                                       type="TLS-HELLO")),
     "haproxy provider does not support TLS-HELLO health monitors.")])
def test_what_haproxy_cannot_do_is_refused(change: Any, message: str) -> None:
    data = g.graph()
    assert lb_haproxy.unsupported(LoadBalancer.from_dict(data)) is None
    change(data)
    assert lb_haproxy.unsupported(LoadBalancer.from_dict(data)) == message


def test_a_listener_binds_the_additional_vips_too() -> None:
    data = g.graph(additional_vips=[{"subnet_id": "s6", "ip_address": "2001:db8::10"}])
    front = section(render(data), f"frontend {g.LISTENER}")
    assert "bind 10.0.0.10:80" in front and "bind [2001:db8::10]:80" in front
