"""Load balancer graphs for the haproxy provider's tests."""
from __future__ import annotations

from typing import Any

from neutrino.resources.lb_graph import LoadBalancer

LB = "11111111-1111-4111-8111-111111111111"
LISTENER = "22222222-2222-4222-8222-222222222222"
POOL = "33333333-3333-4333-8333-333333333333"
STATIC = "44444444-4444-4444-8444-444444444444"
HM = "55555555-5555-4555-8555-555555555555"
M1 = "66666666-6666-4666-8666-666666666661"
M2 = "66666666-6666-4666-8666-666666666662"
M3 = "66666666-6666-4666-8666-666666666663"
POLICY = "77777777-7777-4777-8777-777777777771"
REDIRECT = "77777777-7777-4777-8777-777777777772"
RULE = "88888888-8888-4888-8888-888888888881"
RULE2 = "88888888-8888-4888-8888-888888888882"
PORT = "99999999-9999-4999-8999-999999999999"
NET = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
SUBNET = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"


def member(mid: str, address: str, pool: str = POOL, **kw: Any) -> dict[str, Any]:
    return {"id": mid, "pool_id": pool, "address": address, "protocol_port": 80, **kw}


def graph(status: str = "ACTIVE", **lb: Any) -> dict[str, Any]:
    """An HTTP listener on port 80 with a round-robin pool of two monitored
    members, a /static/ policy to a second pool and a redirect of /old/."""
    return {
        "id": LB, "project_id": "p", "provider": "haproxy", "provisioning_status": status,
        "vip": {"address": "10.0.0.10", "port_id": PORT, "subnet_id": SUBNET, "network_id": NET},
        "listeners": [{
            "id": LISTENER, "loadbalancer_id": LB, "protocol": "HTTP", "protocol_port": 80,
            "default_pool_id": POOL, "connection_limit": 100,
            "insert_headers": {"X-Forwarded-For": "true"},
            "provisioning_status": status,
            "l7policies": [
                {"id": POLICY, "listener_id": LISTENER, "action": "REDIRECT_TO_POOL",
                 "position": 1, "redirect_pool_id": STATIC, "provisioning_status": status,
                 "rules": [{"id": RULE, "l7policy_id": POLICY, "type": "PATH",
                            "compare_type": "STARTS_WITH", "value": "/static/",
                            "provisioning_status": status}]},
                {"id": REDIRECT, "listener_id": LISTENER, "action": "REDIRECT_TO_URL",
                 "position": 2, "redirect_url": "http://example.com/new",
                 "redirect_http_code": 301, "provisioning_status": status,
                 "rules": [{"id": RULE2, "l7policy_id": REDIRECT, "type": "PATH",
                            "compare_type": "STARTS_WITH", "value": "/old/",
                            "provisioning_status": status}]}]}],
        "pools": [
            {"id": POOL, "loadbalancer_id": LB, "protocol": "HTTP",
             "lb_algorithm": "ROUND_ROBIN", "listener_ids": [LISTENER],
             "provisioning_status": status,
             "members": [member(M1, "10.0.1.5", provisioning_status=status),
                         member(M2, "10.0.2.5", provisioning_status=status)],
             "healthmonitor": {"id": HM, "pool_id": POOL, "type": "HTTP", "delay": 1,
                               "timeout": 1, "max_retries": 2, "max_retries_down": 2,
                               "url_path": "/health", "expected_codes": "200-202",
                               "provisioning_status": status}},
            {"id": STATIC, "loadbalancer_id": LB, "protocol": "HTTP",
             "lb_algorithm": "LEAST_CONNECTIONS", "provisioning_status": status,
             "members": [member(M3, "10.0.3.5", pool=STATIC, provisioning_status=status)]}],
        **lb}


def loadbalancer(**kw: Any) -> LoadBalancer:
    return LoadBalancer.from_dict(graph(**kw))


def payload(**kw: Any) -> dict[str, Any]:
    """What the server answers ``get_loadbalancer`` with."""
    return {"loadbalancer": graph(**kw),
            "vip_port": {"id": PORT, "network_id": NET, "mac_address": "fa:16:3e:00:00:10",
                         "fixed_ips": [{"subnet_id": SUBNET, "ip_address": "10.0.0.10"}]},
            "subnets": {SUBNET: {"cidr": "10.0.0.0/24", "gateway_ip": "10.0.0.1"}},
            "mtu": 1450, "certificates": {}}


UDP_LISTENER = "22222222-2222-4222-8222-222222222254"
UDP_POOL = "33333333-3333-4333-8333-333333333354"
UDP_HM = "55555555-5555-4555-8555-555555555554"
U1 = "66666666-6666-4666-8666-666666666671"
U2 = "66666666-6666-4666-8666-666666666672"


def udp_graph(status: str = "ACTIVE", algorithm: str = "ROUND_ROBIN",
              monitor: str | None = "UDP-CONNECT", **lb: Any) -> dict[str, Any]:
    """The HTTP graph plus a UDP listener on port 53 whose round-robin pool
    has two members on port 5353 (weights 3 and 1), checked by ``monitor``."""
    data = graph(status, **lb)
    data["listeners"].append({
        "id": UDP_LISTENER, "loadbalancer_id": LB, "protocol": "UDP", "protocol_port": 53,
        "default_pool_id": UDP_POOL, "provisioning_status": status})
    pool: dict[str, Any] = {
        "id": UDP_POOL, "loadbalancer_id": LB, "protocol": "UDP", "lb_algorithm": algorithm,
        "listener_ids": [UDP_LISTENER], "provisioning_status": status,
        "members": [member(U1, "10.0.1.7", pool=UDP_POOL, protocol_port=5353, weight=3,
                           provisioning_status=status),
                    member(U2, "10.0.2.7", pool=UDP_POOL, protocol_port=5353,
                           provisioning_status=status)]}
    if monitor:
        pool["healthmonitor"] = {"id": UDP_HM, "pool_id": UDP_POOL, "type": monitor,
                                 "delay": 2, "timeout": 1, "max_retries": 2,
                                 "max_retries_down": 3, "provisioning_status": status}
    data["pools"].append(pool)
    return data
