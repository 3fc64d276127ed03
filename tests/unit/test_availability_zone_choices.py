"""Zone-aware scheduling choices as pure functions: a resource with hints
goes only to agents of the hinted zones; agents are spread over zones
(upstream's AZAwareWeightScheduler and AZLeastRoutersScheduler)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from neutrino.plugins import availability_zones as az
from neutrino.plugins.dhcp import scheduler as sch


@dataclass
class Agent:
    host: str
    availability_zone: str | None


def dhcp(host: str, zone: str, load: int) -> sch.DhcpAgent:
    return sch.DhcpAgent(host, host, "dhcp_agent", True, True, load,
                         dt.datetime(2026, 1, 1), zone)


def test_without_hints_every_agent_may_host() -> None:
    agents = [Agent("a", "z1"), Agent("b", "z2")]
    assert az.in_zones(agents, []) == agents


def test_with_hints_only_agents_of_the_hinted_zones_may_host() -> None:
    agents = [Agent("a", "z1"), Agent("b", "z2"), Agent("c", "z3"), Agent("d", None)]
    assert [a.host for a in az.in_zones(agents, ["z1", "z3"])] == ["a", "c"]


def test_spread_takes_one_agent_per_zone_before_a_second_from_any() -> None:
    ordered = [Agent("a1", "z1"), Agent("a2", "z1"), Agent("b1", "z2"), Agent("c1", "z3")]
    assert [a.host for a in az.spread(ordered, 3)] == ["a1", "b1", "c1"]
    assert [a.host for a in az.spread(ordered, 4)] == ["a1", "b1", "c1", "a2"]


def test_spread_counts_the_zones_the_resource_is_already_in() -> None:
    ordered = [Agent("a2", "z1"), Agent("b1", "z2")]
    assert [a.host for a in az.spread(ordered, 1, [Agent("a1", "z1")])] == ["b1"]


def test_spread_never_picks_more_than_there_are() -> None:
    assert [a.host for a in az.spread([Agent("a", "z1")], 3)] == ["a"]
    assert az.spread([Agent("a", "z1")], 0) == []


def test_az_aware_weight_scheduler_spreads_the_least_loaded_over_zones() -> None:
    agents = [dhcp("a1", "z1", 0), dhcp("a2", "z1", 1), dhcp("b1", "z2", 5)]
    chosen = sch.scheduler_from("neutron.scheduler.dhcp_agent_scheduler."
                                "AZAwareWeightScheduler").select(agents, 2)
    assert [a.host for a in chosen] == ["a1", "b1"]
    # the plain WeightScheduler takes the least loaded, whatever their zone
    assert [a.host for a in sch.WeightScheduler().select(agents, 2)] == ["a1", "a2"]


def test_hints_are_sorted_and_default_to_the_configured_zones() -> None:
    assert az.requested({"availability_zone_hints": ["b", "a"]}, ["d"]) == ["a", "b"]
    assert az.requested({"availability_zone_hints": []}, ["d"]) == ["d"]
    assert az.requested({}, []) == []
    assert az.from_text(az.to_text(["a", "b"])) == ["a", "b"]
    assert az.to_text([]) is None and az.from_text(None) == []
