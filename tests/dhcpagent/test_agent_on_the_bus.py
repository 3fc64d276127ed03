"""The DHCP agent as a whole (root, RabbitMQ): it serves the networks the
server gives it with real dnsmasq, and a ``port_create_end`` cast on
``dhcp_agent`` makes the new port's client get its lease. The server side
is a recording fake (the server's DHCP RPC is on branch ``dhcp``)."""
from __future__ import annotations

import threading
import uuid
from pathlib import Path

from neutrino.agents.bridge_interface import BridgeInterfaceDriver
from neutrino.agents.dhcp.agent import DhcpAgent
from neutrino.agents.dhcp.dnsmasq import Settings
from neutrino.agents.dhcp.driver import DnsmasqDriver
from neutrino.rpc.casts import Casts
from neutrino.service import make_conf
from tests.dhcpagent._host import Host, dhcp, needs_root
from tests.dhcpagent.test_agent_loop import FakeServer
from tests.rpc.bus import bus
from tests.waiting import until

pytestmark = needs_root


def test_the_agent_serves_its_networks_and_follows_port_casts(
        host: Host, confs: str, tmp_path: Path, vhost: str) -> None:
    name = f"dhcpt-{uuid.uuid4().hex[:8]}"
    conf_file = tmp_path / "dhcp_agent.ini"
    conf_file.write_text(f"[DEFAULT]\nhost = {name}\ntransport_url = {bus(vhost)}\n"
                         f"state_path = {tmp_path}\n[AGENT]\nreport_interval = 0\n")
    conf = make_conf(["--config-file", str(conf_file)])
    server = FakeServer()
    net = server.add_network(cidrs=("10.78.0.0/24",), ports=1)
    driver = DnsmasqDriver(confs, Settings(), BridgeInterfaceDriver(host.ns))
    agent = DhcpAgent(conf, server, driver=driver)  # type: ignore[arg-type]
    runner = threading.Thread(target=agent.run, daemon=True)
    runner.start()
    try:
        until(lambda: driver.process(net["id"]).active)
        vm1 = server.networks[net["id"]]["ports"][0]
        assert dhcp(host.client(vm1["mac_address"], net["id"]), tmp_path)["ip"] == "10.78.0.10"

        new = server.add_port(net["id"], "compute:nova", "21")
        assert Casts(conf).cast("dhcp_agent", "port_create_end", server=name,
                                payload={"port": new, "priority": 5})
        until(lambda: [new["id"]] in server.called("dhcp_ready_on_ports"))
        assert dhcp(host.client(new["mac_address"], net["id"]), tmp_path)["ip"] == "10.78.0.21"
        assert agent.configurations()["ports"] == 3
    finally:
        agent.halt()
        runner.join(10)
        agent.stop()
        agent.disable(net["id"])
    assert not driver.process(net["id"]).active
