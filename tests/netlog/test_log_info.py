"""What agents are told about logs (``get_sg_log_info_for_port`` and
``get_sg_log_info_for_log_resources``), read from a server's database after
the API made the groups, ports and logs: which ports a log covers (its
target, its group's members, or its project's ports in a group), only
active loggable ones by log, only enabled logs of the port's project by
port, each port with the rules of the groups the log covers."""
from __future__ import annotations

from typing import Any, Iterator

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.plugins.logging import info
from tests.conftest import Client, Server
from tests.netlog.test_logs_api import _group, _log, _port


@pytest.fixture
def db(log_server: Server) -> Iterator[sa.Connection]:
    engine = sa.create_engine(f"sqlite:///{log_server.tmp / 'var' / 'neutrino.sqlite'}")
    with engine.connect() as conn:
        yield conn
    engine.dispose()


def _active(db: sa.Connection, *ports: dict[str, Any]) -> None:
    db.execute(sa.update(t.ports).where(t.ports.c.id.in_([p["id"] for p in ports]))
               .values(status="ACTIVE"))
    db.commit()


def _ports(answer: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {e["id"]: [p["port_id"] for p in e["ports_log"]] for e in answer}


def test_a_log_covers_its_target_its_groups_members_or_its_projects_ports(
        admin: Client, db: sa.Connection) -> None:
    sg = _group(admin)
    member = _port(admin, security_groups=[sg])
    other = _port(admin)  # the default group only
    idle = _port(admin, security_groups=[sg])  # never active
    _active(db, member, other)
    by_group = _log(admin, resource_id=sg)[1]["log"]
    by_target = _log(admin, target_id=other["id"], event="DROP")[1]["log"]
    by_project = _log(admin)[1]["log"]
    answer = info.for_log_resources(db, [by_group, by_target, by_project])
    assert _ports(answer) == {by_group["id"]: [member["id"]],
                              by_target["id"]: [other["id"]],
                              by_project["id"]: sorted([member["id"], other["id"]])}
    assert idle["id"] not in str(answer)
    assert [e["event"] for e in answer] == ["ALL", "DROP", "ALL"]
    [group_log] = [e for e in answer if e["id"] == by_group["id"]]
    rules = group_log["ports_log"][0]["security_group_rules"]
    assert rules and {r["security_group_id"] for r in rules} == {sg}
    assert {r["direction"] for r in rules} == {"egress"}  # a new group's own rules


def test_a_ports_logs_are_the_enabled_ones_of_its_project_that_cover_it(
        admin: Client, db: sa.Connection) -> None:
    sg = _group(admin)
    port = _port(admin, security_groups=[sg])
    by_group = _log(admin, resource_id=sg)[1]["log"]
    by_target = _log(admin, target_id=port["id"])[1]["log"]
    disabled = _log(admin, resource_id=sg, enabled=False)[1]["log"]
    elsewhere = _log(admin, resource_id=_group(admin))[1]["log"]
    got = _ports(info.for_port(db, port["id"]))
    assert got == {by_group["id"]: [port["id"]], by_target["id"]: [port["id"]]}
    assert disabled["id"] not in got and elsewhere["id"] not in got
    assert info.for_port(db, "no-such-port") == []
