"""Where ``trace --live`` asks about a router (``plugins/trace/placement.py``):
the scheduler's bindings and the HA states the agents reported, read from
a real (SQLite) database."""
from __future__ import annotations

import datetime as dt
from typing import Iterator

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.plugins.trace import placement
from neutrino.plugins.trace.placement import Binding, Placement


@pytest.fixture
def conn() -> Iterator[sa.Connection]:
    engine = sa.create_engine("sqlite://")
    t.metadata.create_all(engine, tables=[t.agents, t.routers, t.routerl3agentbindings,
                                          t.ha_router_agent_port_bindings])
    with engine.begin() as connection:
        yield connection


def _agent(conn: sa.Connection, host: str) -> str:
    now = dt.datetime(2026, 1, 1)
    conn.execute(sa.insert(t.agents).values(
        id=f"agent-{host}", agent_type="L3 agent", binary="b", topic="l3_agent", host=host,
        admin_state_up=True, created_at=now, started_at=now, heartbeat_timestamp=now,
        configurations="{}"))
    return f"agent-{host}"


def _router(conn: sa.Connection, router_id: str, hosts: list[str],
            states: list[str] | None = None, distributed: bool = False) -> None:
    now = dt.datetime(2026, 1, 1)
    conn.execute(sa.insert(t.routers).values(
        id=router_id, created_at=now, updated_at=now, admin_state_up=True, status="ACTIVE",
        distributed=distributed, ha=states is not None))
    for index, host in enumerate(hosts, 1):
        agent = _agent(conn, host)
        conn.execute(sa.insert(t.routerl3agentbindings).values(
            router_id=router_id, l3_agent_id=agent, binding_index=index))
        if states is not None:
            conn.execute(sa.insert(t.ha_router_agent_port_bindings).values(
                port_id=f"ha-{router_id}-{host}", router_id=router_id, l3_agent_id=agent,
                state=states[index - 1]))


def test_an_ha_router_is_asked_on_the_host_its_agents_reported_active(
        conn: sa.Connection) -> None:
    _router(conn, "r-ha", ["net-1", "net-2"], ["standby", "active"])
    found = placement.read(conn, ["r-ha"])["r-ha"]
    assert found.ha and not found.distributed
    assert found.bindings == (Binding("net-1", "standby"), Binding("net-2", "active"))
    assert found.central() == ("net-2", "")


def test_an_ha_router_with_no_active_agent_names_every_state_and_no_host(
        conn: sa.Connection) -> None:
    _router(conn, "r-ha", ["net-1", "net-2"], ["standby", "standby"])
    host, why = placement.read(conn, ["r-ha"])["r-ha"].central()
    assert host == ""
    assert why == ("no L3 agent of HA router r-ha is active (net-1: standby, net-2: standby): "
                   "a standby does not route, so none was asked")


def test_a_distributed_router_s_snat_part_is_on_its_first_bound_agent(
        conn: sa.Connection) -> None:
    _router(conn, "r-dvr", ["snat-node"], distributed=True)
    _router(conn, "r-legacy", [])
    found = placement.read(conn, ["r-dvr", "r-legacy", "r-gone"])
    assert set(found) == {"r-dvr", "r-legacy"}
    assert found["r-dvr"].distributed and found["r-dvr"].central() == ("snat-node", "")
    assert found["r-legacy"].central() == ("", "router r-legacy is scheduled to no L3 agent")


def test_two_active_agents_are_a_split_brain_no_one_is_asked_about() -> None:
    split = Placement("r", ha=True, bindings=(Binding("a", "active"), Binding("b", "active")))
    host, why = split.central()
    assert host == "" and "active on several hosts (a: active, b: active)" in why
