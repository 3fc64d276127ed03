"""``neutrino audit [--repair]``: what the database says each host should
have, next to what its Open vSwitch agent reports it has.

Run with the server's configuration (its database and ``transport_url``).
For each live OVS agent, the ports bound to its host (``binding:host_id``,
VIF type ``ovs``) are compared with the agent's answer to a
``realised_state`` call (``topics.AUDIT``): a port the host should have
and the agent has not wired, a wired port no longer bound there, a port
whose br-int tag is not the local VLAN the agent set (or that is gone from
the switch), a br-int port the agent has not wired (a stray one), and a
bridge holding fewer or more flows under the agent's cookie than it
programmed. ``--repair`` casts ``resync`` to the agents
with differences (a full pass re-adds every flow and tag) and audits again
until they are gone or the wait ends. Exit status: 0 nothing differs (after
the repair), 1 differences remain, 2 the question could not be asked.
"""
from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from neutrino.conf.options import database_url
from neutrino.db import tables as t
from neutrino.db.engine import make_engine
from neutrino.rpc import topics
from neutrino.rpc.transport import rpc_transport
from neutrino.service import make_conf

OVS_AGENT = "Open vSwitch agent"


def differences(host: str, bound: set[str], report: dict[str, Any] | None) -> list[str]:
    """Every way ``report`` (None: the agent did not answer) differs from
    the ``bound`` ports the database gives ``host``; one line each."""
    if report is None:
        return [f"{host}: the agent did not answer"]
    out = []
    ports = report.get("ports", {})
    for pid in sorted(bound - set(ports)):
        out.append(f"{host}: port {pid} is bound here but the agent has not wired it")
    for pid in sorted(set(ports) - bound):
        out.append(f"{host}: port {pid} is wired but no longer bound to this host")
    for pid, port in sorted(ports.items()):
        if not port["present"]:
            out.append(f"{host}: port {pid} is gone from br-int")
        elif port["switch_vlan"] != port["vlan"]:
            out.append(f"{host}: port {pid} is tagged {port['switch_vlan']} on the switch, "
                       f"the agent set local VLAN {port['vlan']}")
    for pid in report.get("unwired", ()):
        out.append(f"{host}: br-int has a port for {pid}, which the agent has not wired "
                   "(a stray port, or one the server does not bind here)")
    for bridge, count in sorted(report.get("flows", {}).items()):
        if count["present"] != count["programmed"]:
            out.append(f"{host}: {bridge} holds {count['present']} flows under the agent's "
                       f"cookie, it programmed {count['programmed']}")
    return out


def expected(engine: Any, down_time: int) -> dict[str, set[str]]:
    """Host -> the ports bound to it, for the hosts of live OVS agents."""
    since = (dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
             - dt.timedelta(seconds=down_time))
    with engine.connect() as conn:
        hosts = conn.execute(sa.select(t.agents.c.host).where(
            t.agents.c.agent_type == OVS_AGENT,
            t.agents.c.heartbeat_timestamp >= since)).scalars().all()
        bound: dict[str, set[str]] = {host: set() for host in hosts}
        rows = conn.execute(sa.select(t.ml2_port_bindings.c.port_id, t.ml2_port_bindings.c.host)
                            .where(t.ml2_port_bindings.c.vif_type == "ovs",
                                   t.ml2_port_bindings.c.host.in_(hosts))).all()
    for pid, host in rows:
        bound[host].add(pid)
    return bound


class Agents:
    """Calls and casts to the agents of hosts on ``topics.AUDIT``."""

    def __init__(self, conf: cfg.ConfigOpts, timeout: float) -> None:
        # deferred: only this command and the agents need oslo.messaging
        import oslo_messaging
        self._messaging = oslo_messaging
        self.transport = rpc_transport(conf)
        self.timeout = timeout

    def _client(self, host: str) -> Any:
        target = self._messaging.Target(topic=topics.AUDIT, server=host, version="1.0")
        return self._messaging.get_rpc_client(self.transport, target, timeout=self.timeout)

    def realised(self, host: str) -> dict[str, Any] | None:
        try:
            return dict(self._client(host).call({}, "realised_state"))
        except self._messaging.MessagingException:
            return None

    def resync(self, host: str) -> None:
        self._client(host).cast({}, "resync")

    def close(self) -> None:
        self.transport.cleanup()


def audit(engine: Any, agents: Agents, down_time: int) -> dict[str, list[str]]:
    """Host -> its differences (hosts without any are left out)."""
    found = {}
    for host, bound in sorted(expected(engine, down_time).items()):
        diff = differences(host, bound, agents.realised(host))
        if diff:
            found[host] = diff
    return found


def _show(found: dict[str, list[str]]) -> None:
    for lines in found.values():
        for line in lines:
            print(line)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="neutrino audit", description=(
        "compare what the database says each host should have with what its agents report"))
    parser.add_argument("--repair", action="store_true",
                        help="ask the agents that differ for a resync, then audit again")
    parser.add_argument("--wait", type=float, default=60,
                        help="how long a repair may take, in seconds (default 60)")
    parser.add_argument("--timeout", type=float, default=10,
                        help="how long an agent may take to answer, in seconds (default 10)")
    args, rest = parser.parse_known_args(argv)
    try:
        conf = make_conf(rest)
    except (cfg.Error, ValueError) as exc:
        print(f"neutrino audit: configuration error: {exc}", file=sys.stderr)
        return 2
    engine = make_engine(database_url(conf), reads_only=True)
    agents = Agents(conf, args.timeout)
    try:
        found = audit(engine, agents, conf.agent_down_time)
        _show(found)
        if not found:
            print("no differences")
            return 0
        if not args.repair:
            return 1
        for host in found:
            agents.resync(host)
            print(f"{host}: resync asked")
        deadline = time.monotonic() + args.wait
        while found and time.monotonic() < deadline:
            time.sleep(1)
            found = audit(engine, agents, conf.agent_down_time)
        _show(found)
        print("repaired: no differences" if not found else "differences remain")
        return 0 if not found else 1
    finally:
        agents.close()
        engine.dispose()
