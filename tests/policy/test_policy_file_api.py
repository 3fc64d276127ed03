"""An operator's policy file changes a running server's decisions, no restart."""
from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from tests.conftest import Client, Server


def test_editing_the_policy_file_takes_effect_without_restart(tmp_path: Path) -> None:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("{}\n")
    srv = Server(tmp_path, extra=f"[oslo_policy]\npolicy_file = {policy_file}\n").start()
    try:
        member = Client(srv.url, uuid.uuid4().hex, "member")
        assert member.post("/v2.0/networks", {"network": {"name": "before"}})[0] == 201
        policy_file.write_text('"create_network": "role:admin"\n')
        later = time.time() + 5
        os.utime(policy_file, (later, later))
        status, body = member.post("/v2.0/networks", {"network": {"name": "after"}})
        assert status == 403
        assert body["NeutronError"]["message"] == "rule:create_network is disallowed by policy"
        assert Client(srv.url).post("/v2.0/networks", {"network": {"name": "admin"}})[0] == 201
    finally:
        srv.stop()
