"""Operating statuses and counters from haproxy's ``show stat``."""
from __future__ import annotations

from neutrino.agents.loadbalancer import health
from tests.lbhaproxy import graphs as g

HEADER = ("# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,"
          "eresp,wretr,wredis,status,weight,act,bck\n")


def row(px: str, sv: str, status: str, weight: str = "1", **counters: int) -> str:
    c = {"scur": 0, "stot": 0, "bin": 0, "bout": 0, "ereq": 0, **counters}
    return (f"{px},{sv},0,0,{c['scur']},0,,{c['stot']},{c['bin']},{c['bout']},0,0,{c['ereq']},"
            f"0,0,0,0,{status},{weight},1,0\n")


def stat(m1: str = "UP", m2: str = "UP", backend: str = "UP", front: str = "OPEN",
         m2_weight: str = "1") -> str:
    back, static = f"{g.POOL}:{g.LISTENER}", f"{g.STATIC}:{g.LISTENER}"
    return (HEADER + row(g.LISTENER, "FRONTEND", front, scur=2, stot=7, bin=100, bout=900,
                         ereq=1)
            + row(back, g.M1, m1) + row(back, g.M2, m2, m2_weight) + row(back, "BACKEND", backend)
            + row(static, g.M3, "no check") + row(static, "BACKEND", "UP"))


def by_id(text: str, **graph: object) -> dict[str, str]:
    out = health.statuses(g.loadbalancer(**graph), health.parse_stat(text))
    return {s["id"]: s["operating_status"] for s in out}


def test_everything_up_is_online_and_unmonitored_members_no_monitor() -> None:
    got = by_id(stat())
    assert got[g.LB] == got[g.LISTENER] == got[g.POOL] == got[g.STATIC] == "ONLINE"
    assert got[g.M1] == got[g.M2] == "ONLINE"
    assert got[g.M3] == "NO_MONITOR"
    assert got[g.HM] == got[g.POLICY] == got[g.RULE] == "ONLINE"


def test_a_member_failing_its_checks_is_error_and_its_pool_degraded() -> None:
    got = by_id(stat(m2="DOWN"))
    assert got[g.M2] == "ERROR" and got[g.M1] == "ONLINE"
    assert got[g.POOL] == "DEGRADED"
    assert got[g.LB] == "DEGRADED"


def test_a_member_on_its_way_down_is_still_online_on_its_way_up_still_error() -> None:
    got = by_id(stat(m1="UP 1/2", m2="DOWN 1/2"))
    assert got[g.M1] == "ONLINE" and got[g.M2] == "ERROR"


def test_no_member_answering_is_a_pool_in_error() -> None:
    got = by_id(stat(m1="DOWN", m2="DOWN", backend="DOWN"))
    assert got[g.POOL] == "ERROR" and got[g.LB] == "DEGRADED"


def test_drained_and_disabled_members() -> None:
    got = by_id(stat(m1="MAINT", m2_weight="0"))
    assert got[g.M1] == "OFFLINE"
    assert got[g.M2] == "DRAINING"
    assert by_id(stat(m2="DRAIN"))[g.M2] == "DRAINING"


def test_a_full_listener_is_degraded() -> None:
    got = by_id(stat(front="FULL"))
    assert got[g.LISTENER] == "DEGRADED" and got[g.LB] == "DEGRADED"


def test_what_is_down_is_offline() -> None:
    got = by_id(stat(), admin_state_up=False)
    assert got[g.LB] == got[g.LISTENER] == got[g.POOL] == got[g.M1] == "OFFLINE"


def test_listener_counters_come_from_its_frontend() -> None:
    stats = health.listener_stats(g.loadbalancer(), health.parse_stat(stat()))
    assert stats == [{"listener_id": g.LISTENER, "bytes_in": 100, "bytes_out": 900,
                      "active_connections": 2, "total_connections": 7, "request_errors": 1}]
