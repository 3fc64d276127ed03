"""``docs/operators-guide.md``, "A single host with Keystone", run block by
block as one terminal session would: a Keystone of its own (from PyPI, as
``conftest`` builds it), the guide's ``openstack`` commands against it, its
``neutron.conf`` written as shown, ``neutrino db upgrade`` and ``neutrino
serve`` as shown, then the member's and the admin's commands through the
catalog, and the host's agents started as shown, on a private Open vSwitch.

Only what must differ on a test machine is replaced: Keystone's and
neutrino's ports, the configuration and state paths, the RabbitMQ
virtual host, and the kernel datapath (``netdev`` instead: this machine
has no Open vSwitch kernel module).
"""
from __future__ import annotations

import re
import shlex
import subprocess
import uuid
from pathlib import Path
from typing import Iterator

import pytest
import requests

from neutrino.agents import iproute
from neutrino.aio.host import LocalSwitch
from tests.conftest import free_port
from tests.fullstack.hosts import missing_reason
from tests.guide.blocks import Session, guide_blocks, wait_up
from tests.keystone.conftest import Keystone, ensure_keystone_venv
from tests.rpc.bus import bus
from tests.rpc.conftest import fresh_vhost
from tests.waiting import wait_for


@pytest.fixture(scope="module")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keystone]:
    """A Keystone of the guide's own: its commands create users and services."""
    ensure_keystone_venv()
    ks = Keystone(tmp_path_factory.mktemp("guide-keystone")).start()
    try:
        ks.bootstrap_catalog()
        yield ks
    finally:
        ks.stop()


def test_a_single_host_with_keystone_as_the_guide_says(
        keystone: Keystone, tmp_path: Path) -> None:
    blocks = guide_blocks()
    port = free_port()
    conf_path = blocks["keystone-conf"][0]
    assert conf_path == "/etc/neutron/neutron.conf"
    with fresh_vhost() as vhost:
        session = Session(tmp_path, [
            ("http://127.0.0.1:5000", keystone.url),
            ("127.0.0.1:9696", f"127.0.0.1:{port}"),
            ("bind_port = 9696", f"bind_port = {port}"),
            ("/var/lib/neutron", str(tmp_path / "var")),
            ("rabbit://guest:guest@127.0.0.1:5672/", bus(vhost)),
            ("/etc/neutron", str(tmp_path / "etc")),
            # no kernel datapath on the test machines: Open vSwitch's userspace one
            ("datapath_type=system", "datapath_type=netdev"),
            ("datapath_type = system", "datapath_type = netdev"),
        ])
        session.run(blocks["keystone-register"][1])
        for name, (path, text) in blocks.items():
            if name.startswith("keystone-conf"):
                target = Path(session.text(path))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(session.text(text))
        upgraded = session.run(blocks["keystone-upgrade"][1])
        assert re.search(r"database at \d{4}_", upgraded), upgraded
        serve = shlex.split(session.text(blocks["keystone-serve"][1]).strip())
        assert serve[0] == "neutrino"
        log = tmp_path / "server.log"
        with open(log, "ab") as out:
            server = subprocess.Popen(serve, stdout=out, stderr=out, cwd=tmp_path,
                                      env=session.env)
        try:
            wait_up(f"http://127.0.0.1:{port}/", server, log)
            used = session.run(blocks["keystone-use"][1])
            lines = used.splitlines()
            assert "networks 5" in lines, used  # the demo project's network quota
            assert "demo-net" in lines and "quotas" in lines, used
            _agents(session, blocks, keystone, f"http://127.0.0.1:{port}", tmp_path)
        finally:
            server.terminate()
            assert server.wait(60) == 0, log.read_text()[-3000:]
        # stops on RabbitMQ leave no protocol chatter behind as warnings
        for path in [log, *tmp_path.glob("agent-*.log")]:
            assert " WARNING amqp " not in path.read_text(), path.read_text()[-3000:]


def _agents(session: Session, blocks: dict[str, tuple[str, str]], keystone: Keystone,
            url: str, tmp: Path) -> None:
    """The host's agents as the guide starts them, on a private Open vSwitch
    (this machine runs none; OVS_RUNDIR points the agents and ovs-vsctl at it)."""
    reason = missing_reason()
    if reason:
        pytest.skip(f"the agents' part: {reason}")
    switch = LocalSwitch(tmp / "ovs", f"g{uuid.uuid4().hex[:5]}-ovs")
    switch.start()
    session.env.update({k: switch.env[k] for k in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR")})
    agents: list[subprocess.Popen[bytes]] = []
    headers = {"X-Auth-Token": keystone.admin_token}
    try:
        session.run(blocks["keystone-bridges"][1])
        for line in session.text(blocks["keystone-agents"][1]).strip().splitlines():
            argv = shlex.split(line)
            assert argv[:2] == ["neutrino", "agent"], line
            with open(tmp / f"agent-{argv[2]}.log", "ab") as out:
                agents.append(subprocess.Popen(argv, stdout=out, stderr=out, cwd=tmp,
                                               env=session.env))

        def reported() -> bool:
            found = requests.get(f"{url}/v2.0/agents", headers=headers, timeout=10).json()
            return {a["agent_type"] for a in found["agents"] if a["alive"]} == {
                "Open vSwitch agent", "DHCP agent", "L3 agent"}
        assert wait_for(reported, 90), _logs(tmp)
        net = requests.get(f"{url}/v2.0/networks?name=demo-net", headers=headers,
                           timeout=10).json()["networks"][0]["id"]
        assert wait_for(lambda: requests.get(
            f"{url}/v2.0/networks/{net}/dhcp-agents", headers=headers,
            timeout=10).json()["agents"], 60), _logs(tmp)
        checked = session.run(blocks["keystone-agents-check"][1])
        for kind in ("Open vSwitch agent", "DHCP agent", "L3 agent"):
            assert kind in checked, checked
        assert checked.strip().splitlines()[-1] == "DHCP agent", checked
        assert wait_for(lambda: iproute.namespace_exists(f"qdhcp-{net}"), 60), _logs(tmp)
    finally:
        for agent in agents:
            agent.terminate()
        for agent in agents:
            try:
                agent.wait(60)
            except subprocess.TimeoutExpired:
                agent.kill()
        for ns in iproute.namespaces():  # what the DHCP agent made for this server
            if ns.startswith("qdhcp-") and _of_this_server(url, headers, ns):
                for pid in iproute.ip("netns", "pids", ns, check=False).split():
                    subprocess.run(["kill", "-9", pid], check=False)
                iproute.delete_namespace(ns)
        switch.stop()


def _of_this_server(url: str, headers: dict[str, str], ns: str) -> bool:
    found = requests.get(f"{url}/v2.0/networks/{ns.split('-', 1)[1]}", headers=headers,
                         timeout=10)
    return found.status_code == 200


def _logs(tmp: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                     for p in sorted(tmp.glob("agent-*.log")))

