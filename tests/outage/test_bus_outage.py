"""The message bus goes away for ten seconds, and comes back.

Server and agents reach the machine's RabbitMQ (a virtual host of the
test's own) through a proxy in the test process, which the test cuts: every
connection closed, new ones refused, as when the broker goes down. Agents
keep reporting and listening, the API keeps answering; once the bus is
back, server and agents reconnect by themselves, and no agent shows dead
(``alive: false``) for longer than ``agent_down_time``. The server sends
notifications too, as a deployment with a telemetry service does: neither
they nor the casts to agents may hold a request while the bus is away.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.rpc import topics
from neutrino.service import make_conf
from tests.conftest import Client, Server
from tests.outage.load import Load
from tests.outage.proxy import Proxy
from tests.outage.test_database_outage import SUCCESS, _summary, check_every_answer_is_neutrons
from tests.rpc.bus import OvsAgent
from tests.waiting import until, wait_for

pytestmark = pytest.mark.backend

OUTAGE = 10.0       # seconds without a bus
# agent_down_time: an agent unheard of this long is dead. As long as the
# outage, so the agents go dead near its end (their last reports were sent
# just before it) and must be heard again within that bound once the bus is
# back: their reconnection and the server's, and a report answered.
DOWN_TIME = 10
REPORT_INTERVAL = 1
HOSTS = ("host-a", "host-b")
BROKER = ("127.0.0.1", 5672)


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    proxy = Proxy(BROKER).start()
    try:
        yield proxy
    finally:
        proxy.stop()


class Deletions:
    """An agent's endpoint for the network_delete fanout: what reached it."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def network_delete(self, context: Any, network_id: str, **kwargs: Any) -> None:
        self.seen.add(network_id)


def agent(tmp: Path, url: str, host: str) -> tuple[OvsAgent, Deletions]:
    path = tmp / f"agent-{host}.conf"
    path.write_text(f"[DEFAULT]\nhost = {host}\ntransport_url = {url}\n"
                    f"[AGENT]\nreport_interval = {REPORT_INTERVAL}\n")
    ovs = OvsAgent(make_conf(["--config-file", str(path)]))
    deletions = Deletions()
    ovs.listen(topics.NETWORK_DELETE, [deletions])
    ovs.start_reporting()
    return ovs, deletions


class AgentWatch:
    """GET /v2.0/agents every so often, in a thread: when each host was
    shown dead, as (first, last) moments of each dead stretch."""

    def __init__(self, admin: Client) -> None:
        self.admin = admin
        self.dead: dict[str, list[list[float]]] = {h: [] for h in HOSTS}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "AgentWatch":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            status, body = self.admin.get("/v2.0/agents")
            now = time.monotonic()
            if status != 200:
                continue
            self.samples += 1
            alive = {a["host"]: a["alive"] for a in body["agents"]}
            for host in HOSTS:
                stretches = self.dead[host]
                if alive.get(host) is False:
                    if stretches and stretches[-1][1] is None:
                        continue
                    stretches.append([now, None])  # type: ignore[list-item]
                elif stretches and stretches[-1][1] is None:
                    stretches[-1][1] = now

    def longest_dead(self, host: str) -> float:
        now = time.monotonic()
        return max(((end or now) - start for start, end in self.dead[host]), default=0.0)


def test_agents_and_server_reconnect_after_the_bus_was_away(
        proxy: Proxy, vhost: str, tmp_path: Path) -> None:
    url = f"rabbit://guest:guest@127.0.0.1:{proxy.port}/{vhost}"
    srv = Server(tmp_path, workers=2,
                 extra=f"transport_url = {url}\nagent_down_time = {DOWN_TIME}\n"
                       "[oslo_messaging_notifications]\ndriver = messagingv2\n").start()
    admin = Client(srv.url, roles="admin")
    agents: list[tuple[OvsAgent, Deletions]] = []
    watch = AgentWatch(admin)
    load = Load(srv.url)
    try:
        agents = [agent(tmp_path, url, host) for host in HOSTS]
        until(lambda: all(a["alive"] for a in admin.get("/v2.0/agents")[1]["agents"])
              and len(admin.get("/v2.0/agents")[1]["agents"]) == len(HOSTS))
        watch.start()
        load.start()
        until(lambda: load.count("before", ok=True) >= 20)
        proxy.cut()
        load.phase = "down"
        time.sleep(OUTAGE)  # the outage itself: what the test is about
        load.phase = "recovering"
        connections = proxy.connections
        proxy.restore()
        until(lambda: load.count("recovering", ok=True), timeout=60)
        load.phase = "after"
        until(lambda: load.count("after", ok=True) >= 20, timeout=60)
        # Casts made after the bus came back reach every agent.
        status, body = admin.post("/v2.0/networks", {"network": {"name": "after"}})
        assert status == 201, body
        net_id = body["network"]["id"]
        assert admin.delete(f"/v2.0/networks/{net_id}")[0] == 204
        reached = wait_for(lambda: all(net_id in d.seen for _, d in agents), timeout=30)
        # Reports go on: a dead stretch still open now must close within the bound.
        wait_for(lambda: all(not s or s[-1][1] is not None for s in watch.dead.values()),
                 timeout=DOWN_TIME + 5)
        answers = load.finish()
    finally:
        load.finish()
        watch.stop()
        for ovs, _ in agents:
            ovs.stop()
        srv.stop()

    assert proxy.connections > connections, "nobody reconnected"
    assert reached, [(ovs.host, len(d.seen)) for ovs, d in agents]
    assert watch.samples > 0
    longest = {host: watch.longest_dead(host) for host in HOSTS}
    print(f"answers: {_summary(answers)}; longest dead: {longest}; watch {watch.dead}")
    assert all(t <= DOWN_TIME for t in longest.values()), longest
    check_every_answer_is_neutrons(answers)
    # The API does not wait for the bus: changes that announce themselves to
    # the agents are answered while it is away (the agents catch up later).
    casting = [a for a in answers if a.phase == a.answered_in == "down"
               and a.method == "DELETE" and a.status == 204]
    assert casting, _summary(answers)
    after = [a for a in answers if a.phase == "after"]
    assert all(a.status in SUCCESS for a in after), _summary(after)
