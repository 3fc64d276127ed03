"""Pushes of versioned objects go out only while some agent caches them:
upstream's agents report the versions they cache, neutrino's report none.
(Its own module: in-process servers share one bus, so this server must not
live beside test_versioned_objects' module server.)"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import oslo_messaging
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.rpc.transport import close_in_process, rpc_transport
from neutrino.rpc.vo_types import OBJECTS
from tests.rpc.bus import OvsAgent
from tests.rpc.test_in_process import HOST, InProcess
from tests.rpc.test_versioned_objects import Pushes, UpstreamOvsAgent


def test_nothing_is_pushed_until_an_agent_reports_the_versions_it_caches(
        tmp_path: Path) -> None:
    """neutrino's own agents report no ``resource_versions`` and are told of
    changes by the agent notifier's fanouts: the server re-reads and pushes
    nothing for them. Once an upstream agent reports in, changes are pushed.
    (A fanout delivers in order: the later port's push arriving proves the
    earlier port had none.)"""
    server = InProcess(tmp_path)
    server.rpc.start()
    pushes = Pushes()
    listener = oslo_messaging.get_rpc_server(rpc_transport(server.conf), oslo_messaging.Target(
        topic=OBJECTS["Port"].push_topic, server=HOST, fanout=True), [pushes])
    listener.start()
    try:
        server.api.plugin.vo_pusher.consumers.max_age = 0  # look at every change
        assert OvsAgent(server.conf).register(within=30) == "new"
        net = server.post("/v2.0/networks", {"network": {"name": "quiet"}})["network"]
        unseen = server.post("/v2.0/ports", {"port": {"network_id": net["id"]}})["port"]
        assert UpstreamOvsAgent(server.conf, host="upstream-host").register(within=30) == "new"
        seen = server.post("/v2.0/ports", {"port": {"network_id": net["id"]}})["port"]
        assert pushes.wait("Port", "created", seen["id"]) is not None
        with pushes.seen:
            assert not [b for b in pushes.batches if unseen["id"] in b[1]]
    finally:
        listener.stop()
        listener.wait()
        server.rpc.stop()
        close_in_process()
        server.api.plugin.db.dispose()


class FirstReportOnly(UpstreamOvsAgent):
    """As upstream's agent does: the versions go with its first report only."""

    def state(self) -> dict[str, Any]:
        state = super().state()
        if not state["start_flag"]:
            del state["resource_versions"]
        return state


def test_the_versions_of_an_agent_s_first_report_are_kept_by_its_later_ones(
        tmp_path: Path) -> None:
    server = InProcess(tmp_path)
    server.rpc.start()
    try:
        agent = FirstReportOnly(server.conf, host="versions-host")
        assert agent.register(within=30) == "new"
        assert agent.report_state() == "alive"
        with server.api.plugin.db.reader() as conn:
            kept = conn.execute(sa.select(t.agents.c.resource_versions).where(
                t.agents.c.host == "versions-host")).scalar_one()
        assert json.loads(kept)["Port"] == OBJECTS["Port"].version
    finally:
        server.rpc.stop()
        close_in_process()
        server.api.plugin.db.dispose()
