"""The ``vpnaas`` extension's plan: a VPN service as strongSwan configuration
and the statuses reported of it (no host)."""
from __future__ import annotations

from typing import Any

from neutrino.agents.l3 import ipsec_plan as plan


def _service(**conn: Any) -> dict[str, Any]:
    c = {"id": "c1", "admin_state_up": True, "status": "PENDING_CREATE",
         "external_ip": "172.24.4.10", "peer_address": "172.24.4.20", "peer_id": "172.24.4.20",
         "local_id": "", "psk": 'se"cret', "initiator": "bi-directional",
         "local_cidrs": ["10.1.0.0/24"], "peer_cidrs": ["10.2.0.0/24", "10.3.0.0/24"],
         "dpd": {"action": "hold", "interval": 30, "timeout": 120},
         "ikepolicy": {"auth_algorithm": "sha256", "encryption_algorithm": "aes-256",
                       "pfs": "group14", "ike_version": "v2",
                       "phase1_negotiation_mode": "main",
                       "lifetime": {"units": "seconds", "value": 3600}},
         "ipsecpolicy": {"auth_algorithm": "sha1", "encryption_algorithm": "aes-128-gcm-16",
                         "pfs": "group19", "transform_protocol": "esp",
                         "encapsulation_mode": "tunnel",
                         "lifetime": {"units": "seconds", "value": 3600}}}
    c.update(conn)
    return {"id": "s1", "status": "PENDING_CREATE", "admin_state_up": True,
            "ipsec_site_connections": [c]}


def test_upstream_algorithms_become_strongswan_proposals() -> None:
    service = _service()
    conn = service["ipsec_site_connections"][0]
    assert plan.ike_proposal(conn["ikepolicy"]) == "aes256-sha256-modp2048"
    assert plan.child_proposal(conn["ipsecpolicy"]) == "aes128gcm16-ecp256"
    assert plan.ike_proposal({**conn["ikepolicy"], "encryption_algorithm": "aes-192-ctr",
                              "auth_algorithm": "aes-xcbc", "pfs": "group5"}) == \
        "aes192ctr-aesxcbc-modp1536"
    assert plan.child_proposal({**conn["ipsecpolicy"], "transform_protocol": "ah"}) == \
        "sha1-ecp256"


def test_a_connection_becomes_one_swanctl_connection_with_its_key() -> None:
    text = plan.swanctl_conf(_service(), encap=True)
    for line in ("local_addrs = 172.24.4.10", "remote_addrs = 172.24.4.20", "version = 2",
                 "proposals = aes256-sha256-modp2048", "esp_proposals = aes128gcm16-ecp256",
                 "local_ts = 10.1.0.0/24", "remote_ts = 10.2.0.0/24,10.3.0.0/24",
                 "start_action = start", "dpd_action = trap", "dpd_delay = 30s",
                 "encap = yes", 'id = "172.24.4.10"', "secret = 0sc2UiY3JldA==",
                 "mode = tunnel"):
        assert line in text, line
    assert "c1 {" in text and "ike-c1 {" in text


def test_a_response_only_or_disabled_connection() -> None:
    assert "start_action = none" in plan.swanctl_conf(_service(initiator="response-only"))
    down = _service(admin_state_up=False)
    assert "c1" not in plan.swanctl_conf(down)
    assert not plan.wanted(down)
    assert plan.wanted(_service())


def test_kernel_or_userspace_esp_is_chosen_by_the_backend() -> None:
    assert "kernel-libipsec" in plan.strongswan_conf("/d", "libipsec")
    kernel = plan.strongswan_conf("/d", "kernel")
    assert "kernel-libipsec" not in kernel and "kernel-netlink" in kernel
    assert "socket = unix:///d/charon.vici" in kernel
    assert "encap = yes" not in plan.files(_service(), "/d", "kernel").swanctl_conf


def test_statuses_say_active_only_with_an_installed_child_sa() -> None:
    service = _service()
    up = plan.statuses(service, running=True, installed={"c1"})
    assert (up["status"], up["ipsec_site_connections"]["c1"]["status"]) == ("ACTIVE", "ACTIVE")
    waiting = plan.statuses(service, running=True, installed=set())
    assert (waiting["status"], waiting["ipsec_site_connections"]["c1"]["status"]) == (
        "ACTIVE", "DOWN")
    assert plan.changed(service, waiting)
    shown = {**service, "status": "ACTIVE",
             "ipsec_site_connections": [{**service["ipsec_site_connections"][0],
                                         "status": "DOWN"}]}
    assert not plan.changed(shown, waiting)
    stopped = plan.statuses(service, running=False, installed={"c1"})
    assert stopped["ipsec_site_connections"]["c1"]["status"] == "DOWN"
