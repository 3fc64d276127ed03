"""Accounts between reports and the l3.meter payloads, legacy and granular."""
from __future__ import annotations

from neutrino.agents.metering import accounting, rules
from tests.metering.fakes import label, router


def _router(rid: str, project: str, *labels: dict) -> rules.MeteredRouter:
    return rules.metered_router(router(rid, project, "gw" + rid, list(labels)))


def test_an_account_sums_readings_and_restarts_from_zero_after_a_report() -> None:
    accounts = accounting.Accounts()
    accounts.add({"L": (2, 200, None)}, now=100)
    accounts.add({"L": (3, 300, None)}, now=130)
    [(key, info)] = accounts.take()
    assert (key, info.pkts, info.bytes, info.time) == ("L", 5, 500, 30)
    assert (info.first_update, info.last_update) == (100, 130)
    [(_, after)] = accounts.take()
    assert (after.pkts, after.bytes, after.time, after.first_update) == (0, 0, 0, 100)


def test_accounts_not_updated_for_a_report_interval_are_purged() -> None:
    accounts = accounting.Accounts()
    accounts.add({"old": (1, 1, None)}, now=100)
    accounts.add({"new": (1, 1, None)}, now=400)
    accounts.purge(now=401, report_interval=300)
    assert set(accounts.infos) == {"new"}


def test_legacy_counts_are_per_label_over_all_routers() -> None:
    l1, l2 = label("L1", []), label("L2", [])
    readings = [(_router("a", "p1", l1, l2), {"L1": (1, 10), "L2": (2, 20)}),
                (_router("b", "p2", l1), {"L1": (4, 40)})]
    assert accounting.legacy_counts(readings) == {"L1": (5, 50, None), "L2": (2, 20, None)}


def test_the_legacy_payload_has_upstreams_keys() -> None:
    ra = _router("a", "p1", label("L1", []))
    info = accounting.Info(first_update=100, last_update=130, pkts=5, bytes=50, time=30)
    event, data = accounting.message("L1", info, "h1", False, accounting.Catalog({"a": ra}))
    assert event == "l3.meter"
    assert data == {"label_id": "L1", "project_id": "p1", "tenant_id": "p1", "pkts": 5,
                    "bytes": 50, "time": 30, "first_update": 100, "last_update": 130,
                    "host": "h1"}


def test_granular_counts_have_the_five_granularities() -> None:
    readings = [(_router("a", "p1", label("L1", [])), {"L1": (1, 10)}),
                (_router("b", "p1", label("L1", [])), {"L1": (2, 20)})]
    assert accounting.granular_counts(readings) == {
        "label-L1": (3, 30, "label"),
        "router-a": (1, 10, "router"), "router-b": (2, 20, "router"),
        "project-p1": (3, 30, "project"),
        "router-a-label-L1": (1, 10, "label_router"),
        "router-b-label-L1": (2, 20, "label_router"),
        "project-p1-label-L1": (3, 30, "label_project")}


def test_granular_payloads_name_their_resource() -> None:
    shared = label("S", [], shared=True, name="everyone")
    catalog = accounting.Catalog({"a": _router("a", "p1", shared)})

    def msg(key: str, granularity: str) -> tuple[str, dict]:
        info = accounting.Info(first_update=1, last_update=2, granularity=granularity)
        return accounting.message(key, info, "h1", True, catalog)

    event, data = msg("label-S", "label")
    assert event == "l3.meter.label"
    assert (data["resource_id"], data["label_id"], data["label_name"], data["label_shared"],
            data["project_id"]) == ("label-S", "S", "everyone", True, "all")
    event, data = msg("router-a-label-S", "label_router")
    assert event == "l3.meter.label_router"
    assert (data["router_id"], data["project_id"]) == ("a", "p1")
    assert msg("project-p9-label-S", "label_project")[1]["project_id"] == "p9"
    event, data = msg("router-a", "router")
    assert (event, data["router_id"], data["project_id"]) == ("l3.meter.router", "a", "p1")
    event, data = msg("project-p1", "project")
    assert (event, data["project_id"]) == ("l3.meter.project", "p1")
    assert "label_id" not in data
