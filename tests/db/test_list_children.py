"""A page of a list reads its child tables (addresses, bindings, security
groups, ...) in one statement each. An unfiltered page sorted by id, or a
whole table, holds every row between its least and greatest id, so a child
table keyed by a foreign key to it reads that range of its own index
(``store.Page.id_span``) instead of joining the page's query; a filtered
page, or a table whose key is shared with other resources (tags), still
joins. Either way every listed resource equals its show.

The server's memo of its ports' own rows (``plugins/row_memo.py``) is
emptied before each read here: a page of remembered ports reads none of
those tables."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import pytest

from tests.inprocess import CountingApp

ADMIN = {"X-Project-Id": "p", "X-Roles": "admin"}
CONF = ("[DEFAULT]\nservice_plugins = qos,segments,trunk\n"
        "[ml2]\nextension_drivers = port_security,qos\n")
PORTS = 130  # past store.SUBQUERY_FROM (50) for a whole list and a page of 60
# Child tables of ports keyed by a foreign key to ports.id, with rows below.
KEYED = ("ipallocations", "allowed_address_pairs", "extra_dhcp_opts",
         "securitygroupportbindings", "port_port_security", "ml2_port_bindings")


def _post(app: CountingApp, path: str, body: dict[str, Any]) -> Any:
    res = app.client.simulate_post(path, json=body, headers=ADMIN)
    assert res.status_code == 201, res.text
    return next(iter(res.json.values()))


def _get(app: CountingApp, path: str) -> Any:
    res = app.client.simulate_get(path, headers=ADMIN)
    assert res.status_code == 200, res.text
    return res.json


@pytest.fixture
def app(db_url: str, tmp_path: Path) -> Iterator[CountingApp]:
    """Ports on two networks of two projects, with every kind of child row
    on some of them, and tagged networks (the tags table is shared)."""
    app = CountingApp(tmp_path, CONF, url=db_url)
    try:
        nets = []
        for i, project in enumerate(("p", "q")):
            net = _post(app, "/v2.0/networks", {"network": {
                "name": f"n{i}", "tenant_id": project, "tags": [f"net{i}"]}})["id"]
            for v in (0, 1):
                _post(app, "/v2.0/subnets", {"subnet": {
                    "network_id": net, "ip_version": 4, "cidr": f"10.{i}.{v}.0/24",
                    "tenant_id": project}})
            nets.append((net, project))
        bodies = []
        for k in range(PORTS):
            net, project = nets[k % 2]
            body: dict[str, Any] = {"network_id": net, "tenant_id": project, "name": f"p{k:03d}"}
            if k % 3 == 0:
                body["tags"] = [f"t{k}", "every-third"]
            if k % 5 == 0:
                body["allowed_address_pairs"] = [{"ip_address": f"192.168.{k}.0/24"}]
            if k % 7 == 0:
                body["extra_dhcp_opts"] = [{"opt_name": "mtu", "opt_value": "1400"}]
            if k % 11 == 0 and k % 5:
                body.update(port_security_enabled=False, security_groups=[])
            bodies.append(body)
        for start in range(0, PORTS, 50):
            res = app.client.simulate_post("/v2.0/ports", json={"ports": bodies[start:start + 50]},
                                           headers=ADMIN)
            assert res.status_code == 201, res.text
        yield app
    finally:
        app.api.plugin.db.dispose()


def _forget(app: CountingApp) -> None:
    app.api.plugin.handlers["ports"].memo.clear()


def _recorded(app: CountingApp, path: str) -> tuple[list[str], Any]:
    _forget(app)
    return app.recorded(path, ADMIN)


def _child_reads(statements: list[str]) -> dict[str, str]:
    out = {}
    for s in statements:
        flat = " ".join(s.split())
        m = re.match(r"SELECT .*? FROM (\w+)", flat)
        if m and m.group(1) in (*KEYED, "tags"):
            out[m.group(1)] = flat
    return out


def test_an_unfiltered_page_reads_its_child_rows_by_a_range_of_their_key(
        app: CountingApp) -> None:
    statements, body = _recorded(app, "/v2.0/ports?limit=60")
    assert len(body["ports"]) == 60
    reads = _child_reads(statements)
    for table in KEYED:
        assert "BETWEEN" in reads[table] and "(SELECT" not in reads[table], reads[table]
    assert "(SELECT ports.id" in reads["tags"]  # other resources' tags share the table


def test_a_whole_unfiltered_list_reads_child_tables_whole(app: CountingApp) -> None:
    statements, body = _recorded(app, "/v2.0/ports?sort_key=name&sort_dir=desc")
    assert len(body["ports"]) == PORTS
    reads = _child_reads(statements)
    for table in KEYED:
        assert " WHERE " not in reads[table], reads[table]
    assert "(SELECT ports.id" in reads["tags"]


FILTERED = ("network_id={net}&limit=60", "name=p001", "tenant_id=q",
            "binding:host_id=&limit=60")  # the last: an extension's filter


def test_a_filtered_page_still_joins_its_query(app: CountingApp) -> None:
    net = _get(app, "/v2.0/networks?name=n0")["networks"][0]["id"]
    for query in FILTERED:
        statements, body = _recorded(app, "/v2.0/ports?" + query.format(net=net))
        assert body["ports"], query
        for _table, read in _child_reads(statements).items():
            assert "BETWEEN" not in read, (query, read)


def _walk(app: CountingApp, query: str) -> list[dict[str, Any]]:
    """Every page of a list, following its ``next`` (or ``previous``) links."""
    wanted = "previous" if "page_reverse=True" in query else "next"
    items: list[dict[str, Any]] = []
    path: str | None = "/v2.0/ports?" + query
    _forget(app)
    while path:
        body = _get(app, path)
        items += body["ports"]
        links = [urlsplit(link["href"]) for link in body.get("ports_links", [])
                 if link["rel"] == wanted]
        path = f"{links[0].path}?{links[0].query}" if links and body["ports"] else None
    return items


PAGES = (
    "",  # the whole table, sorted by id
    "limit=60",  # runs of the id order, after markers
    "limit=55&sort_key=id&sort_dir=desc",
    "sort_key=name&sort_dir=asc",  # the whole table in another order
    "sort_key=name&sort_dir=asc&limit=60",  # not an id range: joins
    "limit=60&page_reverse=True&marker={last}",
)


def test_every_listed_port_equals_its_show(app: CountingApp) -> None:
    _forget(app)
    every = _get(app, "/v2.0/ports")["ports"]
    by_id = {p["id"]: p for p in every}
    assert sum(bool(p["tags"]) for p in every) == len(range(0, PORTS, 3))
    assert sum(not p["port_security_enabled"] for p in every) == len(
        [k for k in range(0, PORTS, 11) if k % 5])
    _forget(app)
    shows = {pid: _get(app, f"/v2.0/ports/{pid}")["port"] for pid in by_id}
    last = max(by_id)
    for query in PAGES:
        listed = _walk(app, query.format(last=last))
        expected = len(every) - (1 if "marker" in query else 0)
        assert len({p["id"] for p in listed}) == expected, query
        for port in listed:
            assert port == shows[port["id"]], query


def test_every_listed_network_equals_its_show(app: CountingApp) -> None:
    for _ in range(60):
        _post(app, "/v2.0/networks", {"network": {"name": "more"}})
    for query in ("", "?limit=55", "?sort_key=name&sort_dir=asc"):
        listed = _get(app, "/v2.0/networks" + query)["networks"]
        assert len(listed) >= 55
        for net in listed:
            assert net == _get(app, f"/v2.0/networks/{net['id']}")["network"]
