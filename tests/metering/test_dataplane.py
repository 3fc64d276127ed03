"""Real packets through a router namespace move a label's counters, and the
``l3.meter`` notifications consumed from RabbitMQ carry them (root only).

The router is built by the L3 agent's RouterManager on the l3host fabric
(Linux bridges and veths in namespaces of the test's own prefix): vm1
(10.100.1.11) and vm2 (10.100.2.11) behind it, SNATed to 172.24.4.10 towards
the external host 172.24.4.100. The label counts egress from 10.100.0.0/16
except vm1 (excluded) and ingress to 10.100.2.0/24.
"""
from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.l3.router import RouterManager
from neutrino.agents.metering import driver as drivers
from neutrino.agents.metering.agent import MeteringAgent
from neutrino.rpc.notifications import Notifications
from tests.l3host.fabric import Fabric, namespaces, need_root, sh
from tests.l3host.routers import gateway, interface, router
from tests.metering.fakes import FakePlugin, label, rule
from tests.rpc.bus import agent_conf
from tests.rpc.conftest import vhost  # noqa: F401
from tests.rpc.test_notifications import Bus
from tests.waiting import until

PAYLOAD = 100  # ICMP data bytes: each echo is a 128-byte IP packet


@pytest.fixture
def routed() -> Iterator[tuple[Fabric, dict[str, Any], dict[str, str]]]:
    need_root()
    fabric = Fabric()
    ns = None
    try:
        qr_a = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")
        qr_b = interface("10.100.2.0/24", "10.100.2.1", "fa:16:3e:00:0b:01")
        gw = gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.100", "fa:16:3e:00:ee:01")
        hosts = {
            "vm1": fabric.host("vm1", qr_a["network_id"], "10.100.1.11/24", "10.100.1.1",
                               "fa:16:3e:00:01:11"),
            "vm2": fabric.host("vm2", qr_b["network_id"], "10.100.2.11/24", "10.100.2.1",
                               "fa:16:3e:00:02:11"),
            "ext": fabric.host("ext", gw["network_id"], "172.24.4.100/24", None,
                               "fa:16:3e:00:ee:99")}
        r = router([qr_a, qr_b], gw)
        ns = "qrouter-" + r["id"]
        assert RouterManager(fabric).apply(r).error is None
        yield fabric, r, hosts
    finally:
        if ns is not None and ns in namespaces():
            sh("ip", "netns", "delete", ns, check=False)
        fabric.cleanup()


def _ping(ns: str, address: str, count: int) -> int:
    """Echo requests sent; the number of replies received."""
    out = sh("ip", "netns", "exec", ns, "ping", "-c", str(count), "-i", "0.2", "-W", "1",
             "-s", str(PAYLOAD), address, check=False).stdout
    found = re.search(r"(\d+) received", out)
    return int(found.group(1)) if found else 0


def test_traffic_through_the_gateway_is_reported_as_l3_meter(
        routed: tuple[Fabric, dict[str, Any], dict[str, str]], tmp_path: Path,
        vhost: str) -> None:  # noqa: F811
    fabric, r, hosts = routed
    ns = "qrouter-" + r["id"]
    label_id = str(uuid.uuid4())
    r["project_id"] = "proj-m"
    r["_metering_labels"] = [label(label_id, [
        rule("egress", remote_ip_prefix="10.100.0.0/16"),
        rule("egress", True, remote_ip_prefix="10.100.1.11/32"),
        rule("ingress", remote_ip_prefix="10.100.2.0/24")])]
    host = f"meter-{uuid.uuid4().hex[:6]}"
    conf = agent_conf(tmp_path, vhost, host,
                      "driver = iptables\nmeasure_interval = 0.2\nreport_interval = 0.5\n"
                      "[AGENT]\nreport_interval = 0\n"
                      "[oslo_messaging_notifications]\ndriver = messagingv2\n"
                      "topics = notifications\n")
    plugin = FakePlugin([r])
    agent = MeteringAgent(conf, plugin_rpc=plugin, driver=drivers.NftablesDriver(),
                          notifier=Notifications(conf, publisher="metering"))
    bus = Bus(vhost)
    agent.start()
    try:
        until(lambda: "neutrino_meter" in sh("ip", "netns", "exec", ns, "nft", "list",
                                                "tables").stdout)
        excluded_replies = _ping(hosts["vm1"], "172.24.4.100", 3)  # not counted
        replies = _ping(hosts["vm2"], "172.24.4.100", 5)
        assert excluded_replies > 0 and replies > 0
        expected = 5 + replies  # vm2's requests out, its replies in

        seen: list[dict[str, Any]] = []

        def counted() -> int:
            seen.extend(m for m in bus.drain(0, timeout=0.3)
                        if m["event_type"] == "l3.meter")
            return sum(m["payload"]["pkts"] for m in seen
                       if m["payload"]["label_id"] == label_id) >= expected
        until(counted)
        mine = [m for m in seen if m["payload"]["label_id"] == label_id]
        assert sum(m["payload"]["pkts"] for m in mine) == expected
        assert sum(m["payload"]["bytes"] for m in mine) == expected * (PAYLOAD + 28)
        last = mine[-1]
        assert last["publisher_id"] == f"metering.{host}"
        assert last["priority"] == "INFO"
        assert last["payload"]["project_id"] == "proj-m"
        assert last["payload"]["host"] == host
        assert set(last["payload"]) >= {"label_id", "project_id", "tenant_id", "pkts", "bytes",
                                         "time", "first_update", "last_update", "host"}

        # the router leaves this host: its table goes, the L3 agent's NAT stays
        plugin.routers = []
        agent.request_sync()
        until(lambda: "neutrino_meter" not in sh("ip", "netns", "exec", ns, "nft",
                                                    "list", "tables").stdout)
        assert "neutrino_l3" in sh("ip", "netns", "exec", ns, "nft", "list", "tables").stdout
    finally:
        agent.stop()
        bus.close()
