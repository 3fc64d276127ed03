"""The ``vpnaas`` extension's host adapter on real namespaces: two routers'
charons (userspace ESP) joined by a veth pair carry the traffic between
their subnets only with matching keys, and leave nothing when removed."""
from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.l3 import ipsec_plan as plan
from neutrino.agents.l3.charon import Charon

pytestmark = pytest.mark.skipif(
    not Path("/usr/lib/ipsec/charon").exists() or shutil.which("swanctl") is None
    or shutil.which("ip") is None, reason="needs strongSwan (charon, swanctl) and root")

OUTSIDE = {"a": "192.0.2.1", "b": "192.0.2.2"}
INSIDE = {"a": "10.131.1.1/24", "b": "10.131.2.1/24"}


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=check)


def _service(here: str, there: str, psk: str, ike: dict[str, Any] | None = None,
             ipsec: dict[str, Any] | None = None) -> dict[str, Any]:
    policy = {"auth_algorithm": "sha256", "encryption_algorithm": "aes-128", "pfs": "group14",
              "lifetime": {"units": "seconds", "value": 3600}}
    return {"id": f"s-{here}", "status": "PENDING_CREATE", "admin_state_up": True,
            "ipsec_site_connections": [{
                "id": f"conn-{here}", "status": "PENDING_CREATE", "admin_state_up": True,
                "external_ip": OUTSIDE[here], "peer_address": OUTSIDE[there],
                "peer_id": OUTSIDE[there], "local_id": "", "psk": psk,
                "initiator": "bi-directional",
                "local_cidrs": [INSIDE[here].replace(".1/24", ".0/24")],
                "peer_cidrs": [INSIDE[there].replace(".1/24", ".0/24")],
                "dpd": {"action": "hold", "interval": 30, "timeout": 120},
                "ikepolicy": {**policy, "ike_version": "v2", "phase1_negotiation_mode": "main",
                              **(ike or {})},
                "ipsecpolicy": {**policy, "transform_protocol": "esp",
                                "encapsulation_mode": "tunnel", **(ipsec or {})}}]}


@pytest.fixture
def routers(tmp_path: Path) -> Iterator[dict[str, Charon]]:
    if sh("id", "-u").stdout.strip() != "0":
        pytest.skip("needs root")
    tag = uuid.uuid4().hex[:8]
    charons = {side: Charon(str(tmp_path), f"vpntest-{tag}-{side}") for side in "ab"}
    try:
        for side, charon in charons.items():
            sh("ip", "netns", "add", charon.ns)
            sh("ip", "-n", charon.ns, "link", "set", "lo", "up")
            sh("ip", "-n", charon.ns, "addr", "add", INSIDE[side], "dev", "lo")
        a, b = charons["a"].ns, charons["b"].ns
        sh("ip", "link", "add", f"vt{tag}a", "netns", a, "type", "veth", "peer", "name",
           f"vt{tag}b", "netns", b)
        for side, charon in charons.items():
            dev = f"vt{tag}{side}"
            sh("ip", "-n", charon.ns, "addr", "add", f"{OUTSIDE[side]}/24", "dev", dev)
            sh("ip", "-n", charon.ns, "link", "set", dev, "up")
        yield charons
    finally:
        for charon in charons.values():
            charon.remove()
            sh("ip", "netns", "del", charon.ns, check=False)


def _up(charons: dict[str, Charon], keys: dict[str, str], **policies: Any) -> None:
    for side, there in (("a", "b"), ("b", "a")):
        charon = charons[side]
        charon.write(plan.files(_service(side, there, keys[side], **policies), str(charon.dir),
                                "libipsec"))
        charon.start()
        charon.load()


def _reaches(charons: dict[str, Charon]) -> bool:
    return sh("ip", "netns", "exec", charons["a"].ns, "ping", "-c1", "-W1", "-I", "10.131.1.1",
              "10.131.2.1", check=False).returncode == 0


def _installed(charons: dict[str, Charon], timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if charons["a"].installed() == {"conn-a"} and charons["b"].installed() == {"conn-b"}:
            return True
        time.sleep(0.3)
    return False


def test_matching_keys_carry_the_subnets_traffic_over_userspace_esp(
        routers: dict[str, Charon]) -> None:
    assert not _reaches(routers)
    _up(routers, {"a": "s3cret", "b": "s3cret"})
    assert _installed(routers), (routers["a"].dir / "charon.log").read_text()[-3000:]
    assert _reaches(routers)
    assert "ipsec0" in sh("ip", "-n", routers["a"].ns, "link").stdout
    pids = [c.pid() for c in routers.values()]
    for charon in routers.values():
        charon.remove()
    assert all(c.pid() is None for c in routers.values()) and not any(
        Path(f"/proc/{pid}").exists() and b"charon" in Path(f"/proc/{pid}/cmdline").read_bytes()
        for pid in pids if pid)
    assert not routers["a"].dir.exists()


def test_a_wrong_key_installs_nothing(routers: dict[str, Charon]) -> None:
    _up(routers, {"a": "s3cret", "b": "wrong"})
    assert not _installed(routers, timeout=5)
    assert routers["a"].installed() == set() and not _reaches(routers)


@pytest.mark.parametrize("ike,ipsec", [
    ({"encryption_algorithm": "aes-256-ctr", "auth_algorithm": "aes-xcbc", "pfs": "group31"},
     {"encryption_algorithm": "aes-256-gcm-16", "pfs": "group19"}),
    ({"encryption_algorithm": "aes-192", "auth_algorithm": "sha512", "pfs": "group20",
      "ike_version": "v1"},
     {"encryption_algorithm": "aes-128-ctr", "auth_algorithm": "sha384", "pfs": "group5"}),
])
def test_other_upstream_algorithms_negotiate(routers: dict[str, Charon], ike: dict[str, Any],
                                             ipsec: dict[str, Any]) -> None:
    _up(routers, {"a": "k", "b": "k"}, ike=ike, ipsec=ipsec)
    assert _installed(routers), (routers["a"].dir / "charon.log").read_text()[-3000:]
    assert _reaches(routers)
