"""keepalived.conf of an HA router, against recorded expectations (pure rendering)."""
from __future__ import annotations

import pytest

from neutrino.agents.l3 import keepalived, model
from tests.l3host.routers import _port, fip, gateway, interface, router

QR = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01",
               port_id="aaaaaaaa-1111-2222-3333-444444444444")
GW = gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:ee:01",
             port_id="cccccccc-1111-2222-3333-444444444444")
HA_PORT = _port("ha-net", "ha-subnet", "169.254.192.0/18", None, "169.254.192.7",
                "fa:16:3e:00:0a:07",
                device_owner="network:router_ha_interface",
                port_id="dddddddd-1111-2222-3333-444444444444")


def ha_router(**kw):  # type: ignore[no-untyped-def]
    r = router([QR], GW, fips=[fip("172.24.4.20", "10.100.1.11", "")],
               routes=[{"destination": "10.200.0.0/16", "nexthop": "10.100.1.254"}], **kw)
    r.update(ha=True, ha_vr_id=3, _ha_interface=HA_PORT, _ha_state="standby")
    return r


RECORDED = """global_defs {
    notification_email_from neutron@openstack.org
    router_id neutron
}
vrrp_instance VR_3 {
    state BACKUP
    interface ha-dddddddd-11
    virtual_router_id 3
    priority 50
    garp_master_delay 60
    nopreempt
    advert_int 2
    track_interface {
        ha-dddddddd-11
    }
    virtual_ipaddress {
        169.254.0.3/24 dev ha-dddddddd-11
    }
    virtual_ipaddress_excluded {
        10.100.1.1/24 dev qr-aaaaaaaa-11 no_track
        172.24.4.10/24 dev qg-cccccccc-11 no_track
        172.24.4.20/32 dev qg-cccccccc-11 no_track
    }
    virtual_routes {
        0.0.0.0/0 via 172.24.4.1 dev qg-cccccccc-11 no_track
        10.200.0.0/16 via 10.100.1.254 no_track
    }
    notify "/state/r/notify.sh"
}
"""


def test_ha_router_config_moves_addresses_floating_ips_and_routes_with_the_master() -> None:
    desired = model.desired_router(ha_router())
    assert keepalived.config(desired, keepalived.Settings(), "/state/r/notify.sh") == RECORDED


def test_vrrp_password_adds_an_authentication_block_and_advert_int_is_taken() -> None:
    desired = model.desired_router(ha_router())
    text = keepalived.config(desired, keepalived.Settings(1, "AH", "s3cret"), "/n.sh")
    assert ("    advert_int 1\n    authentication {\n        auth_type AH\n"
            "        auth_pass s3cret\n    }\n    track_interface {") in text


def test_ha_router_has_an_ha_device_carrying_the_ha_port_address() -> None:
    desired = model.desired_router(ha_router())
    assert desired.ha == model.Ha(3, "ha-dddddddd-11", "169.254.192.7/18", "standby")
    assert "ha-dddddddd-11" in desired.device_names


def test_router_without_this_hosts_ha_port_is_not_ha_here() -> None:
    r = ha_router()
    del r["_ha_interface"]
    desired = model.desired_router(r)
    assert desired.ha is None
    with pytest.raises(ValueError):
        keepalived.config(desired, keepalived.Settings(), "/n.sh")


def test_keepalived_states_map_to_the_servers_ha_states(tmp_path) -> None:  # type: ignore[no-untyped-def]
    proc = keepalived.Keepalived(str(tmp_path), "r1")
    assert proc.state() is None and proc.pid() is None
    proc.dir.mkdir()
    for written, shown in (("MASTER", "active"), ("BACKUP", "standby"), ("FAULT", "standby")):
        proc.state_file.write_text(written)
        assert proc.state() == shown


class StatesPlugin:
    def __init__(self) -> None:
        self.reported: list[dict[str, str]] = []

    def update_ha_routers_states(self, states: dict[str, str]) -> None:
        self.reported.append(states)


def test_agent_reports_keepalived_transitions_once_and_redoes_a_dead_keepalived(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    from neutrino.agents.l3.agent import L3Agent
    from neutrino.agents.l3.router import RouterManager
    from neutrino.service import make_conf
    path = tmp_path / "l3.conf"
    path.write_text(f"[DEFAULT]\nhost = l3host-a\nstate_path = {tmp_path}\n"
                    "[AGENT]\nreport_interval = 0\n")
    conf = make_conf(["--config-file", str(path)])
    plugin = StatesPlugin()
    manager = RouterManager(object(), ha_confs_path=str(tmp_path / "ha"))  # type: ignore[arg-type]
    agent = L3Agent(conf, driver=object(), plugin_rpc=plugin, routers=manager)  # type: ignore[arg-type]
    desired = model.desired_router(ha_router())
    manager.applied[desired.router_id] = desired
    agent._take()  # the start's full sync is not what this test is about
    proc = manager.keepalived(desired.router_id)
    proc.dir.mkdir(parents=True)
    proc.state_file.write_text("BACKUP")  # what the server has already: nothing to say
    agent.check_ha_states()
    assert plugin.reported == []
    assert agent.pending()  # no keepalived running: the router is redone
    proc.state_file.write_text("MASTER")
    agent.check_ha_states()
    agent.check_ha_states()
    assert plugin.reported == [{desired.router_id: "active"}]
