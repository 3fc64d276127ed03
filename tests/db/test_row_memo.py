"""A port shown or listed again takes its own child rows (addresses, tags,
pairs, DHCP options, groups) and its own one-to-one rows (binding, port
security, QoS policy) from its server's memo while its revision stands, and
every change of them, through this server or another on the same database,
shows at once (``plugins/row_memo.py``)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest
import sqlalchemy as sa

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.row_memo import RowMemo
from neutrino.plugins.store import ListQuery
from tests.inprocess import CountingApp

ADMIN = {"X-Project-Id": "p", "X-Roles": "admin"}
CONF = ("[DEFAULT]\nservice_plugins = qos,trunk\n"
        "[ml2]\nextension_drivers = port_security,qos\n")
OWN_TABLES = ("tags", "ipallocations", "allowed_address_pairs", "extra_dhcp_opts",
              "securitygroupportbindings",
              "ml2_port_bindings", "port_port_security", "qos_port_policy_bindings")


@pytest.fixture
def apps(db_url: str, tmp_path: Path) -> Iterator[tuple[CountingApp, CountingApp]]:
    """Two servers' plugins (two memos) on one database."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = CountingApp(tmp_path / "a", CONF, url=db_url)
    two = CountingApp(tmp_path / "b", CONF, url=db_url)
    try:
        yield one, two
    finally:
        one.api.plugin.db.dispose()
        two.api.plugin.db.dispose()


def call(app: CountingApp, method: str, path: str, body: Any = None, status: int = 200) -> Any:
    res = app.client.simulate_request(method, path, json=body, headers=ADMIN)
    assert res.status_code == status, res.text
    return res.json


def post(app: CountingApp, path: str, body: dict[str, Any]) -> dict[str, Any]:
    return next(iter(call(app, "POST", path, body, 201).values()))


def shown(app: CountingApp, port_id: str) -> tuple[dict[str, Any], list[str]]:
    statements, body = app.recorded(f"/v2.0/ports/{port_id}", ADMIN)
    return body["port"], statements


def truth(app: CountingApp, port_id: str) -> dict[str, Any]:
    """The port as a page reads it with nothing remembered: its child
    tables in batches."""
    memo(app).clear()
    return call(app, "GET", f"/v2.0/ports?id={port_id}")["ports"][0]


def listed(app: CountingApp, query: str = "") -> tuple[dict[str, dict[str, Any]], list[str]]:
    statements, body = app.recorded(f"/v2.0/ports{query}", ADMIN)
    return {p["id"]: p for p in body["ports"]}, statements


def memo(app: CountingApp) -> RowMemo:
    return app.api.plugin.handlers["ports"].memo


def reads_own_tables(statements: list[str]) -> bool:
    """Whether a statement reads one of the tables (alone, or joined to the
    port's row as a show reads the one-to-one ones)."""
    return any(f"FROM {table} " in s or f"FROM {table}\n" in s or f"JOIN {table} ON" in s
               for s in statements for table in OWN_TABLES)


def network(app: CountingApp, cidr: str = "10.7.0.0/24") -> tuple[str, str]:
    net = post(app, "/v2.0/networks", {"network": {"name": "n"}})["id"]
    subnet = post(app, "/v2.0/subnets", {"subnet": {"network_id": net, "ip_version": 4,
                                                    "cidr": cidr}})["id"]
    return net, subnet


def test_a_port_shown_again_takes_its_own_rows_from_the_memo(
        apps: tuple[CountingApp, CountingApp]) -> None:
    app, _ = apps
    net, _ = network(app)
    group = post(app, "/v2.0/security-groups", {"security_group": {"name": "g"}})["id"]
    port = post(app, "/v2.0/ports", {"port": {
        "network_id": net, "tags": ["b", "a"], "security_groups": [group],
        "allowed_address_pairs": [{"ip_address": "10.1.0.0/24"}],
        "extra_dhcp_opts": [{"opt_name": "tftp-server", "opt_value": "10.0.0.1"}]}})
    memo(app).clear()  # as a server that did not make it

    first, statements = shown(app, port["id"])
    assert reads_own_tables(statements)
    hits = memo(app).hits
    again, statements = shown(app, port["id"])
    assert again == first == truth(app, port["id"])
    assert not reads_own_tables(statements)
    assert [s for s in statements if s.startswith("SELECT")] == statements[-1:]
    # not even as NULL columns: the fewer the columns, the cheaper the answer
    assert not [t for t in OWN_TABLES if f"{t}__" in statements[-1]], statements[-1]
    assert memo(app).hits == hits + 1


def test_a_port_a_server_created_or_updated_is_shown_from_its_memo(
        apps: tuple[CountingApp, CountingApp]) -> None:
    app, other = apps
    net, _ = network(app)
    made = post(app, "/v2.0/ports", {"port": {"network_id": net, "tags": ["x"]}})
    port, statements = shown(app, made["id"])
    assert not reads_own_tables(statements)
    assert port == made == truth(app, made["id"])
    renamed = call(app, "PUT", f"/v2.0/ports/{made['id']}", {"port": {"name": "r"}})["port"]
    port, statements = shown(app, made["id"])
    assert not reads_own_tables(statements) and port == renamed
    # The other server made and changed nothing: it reads the tables.
    port, statements = shown(other, made["id"])
    assert reads_own_tables(statements) and port == renamed


def changes(policy: str) -> dict[str, tuple[str, str, Any]]:
    """Every kind of change of a port's own rows, with a QoS policy to
    take."""
    return {**CHANGES, "qos policy": ("PUT", "", {"port": {"qos_policy_id": policy}}),
            "qos policy removed": ("PUT", "", {"port": {"qos_policy_id": None}})}


CHANGES = {
    "tag added": ("PUT", "/tags/new", None),
    "tag removed": ("DELETE", "/tags/old", None),
    "tags replaced": ("PUT", "/tags", {"tags": ["p", "q"]}),
    "all tags removed": ("DELETE", "/tags", None),
    "fixed_ips": ("PUT", "", {"port": {"fixed_ips": [{"ip_address": "10.7.0.77"}]}}),
    "address pairs": ("PUT", "", {"port": {"allowed_address_pairs": [
        {"ip_address": "10.9.9.9", "mac_address": "fa:16:3e:00:00:09"}]}}),
    "dhcp options": ("PUT", "", {"port": {"extra_dhcp_opts": [
        {"opt_name": "bootfile-name", "opt_value": "pxe"}]}}),
    "security groups": ("PUT", "", {"port": {"security_groups": []}}),
    "binding host": ("PUT", "", {"port": {"binding:host_id": "host-1"}}),
    "binding vnic_type": ("PUT", "", {"port": {"binding:vnic_type": "direct"}}),
    "binding host removed": ("PUT", "", {"port": {"binding:host_id": ""}}),
    "port security": ("PUT", "", {"port": {"port_security_enabled": False,
                                           "allowed_address_pairs": []}}),
}


def read(app: CountingApp, port_id: str, how: str) -> tuple[dict[str, Any], list[str]]:
    """The port as a show or as a whole list gives it, with the statements."""
    if how == "shown":
        return shown(app, port_id)
    ports, statements = listed(app)
    return ports[port_id], statements


@pytest.mark.parametrize("how", ["shown", "listed"])
@pytest.mark.parametrize("where", ["this server", "another server"])
def test_every_change_of_a_ports_own_rows_shows_at_once(
        apps: tuple[CountingApp, CountingApp], where: str, how: str) -> None:
    app, other = apps
    writer = app if where == "this server" else other
    net, _ = network(app)
    port = post(app, "/v2.0/ports", {"port": {"network_id": net, "tags": ["old"]}})
    policy = post(app, "/v2.0/qos/policies", {"policy": {"name": "q"}})["id"]
    for change, (method, suffix, body) in changes(policy).items():
        read(app, port["id"], how)
        before, statements = read(app, port["id"], how)
        assert not reads_own_tables(statements), change  # from the memo
        status = 204 if method == "DELETE" else (201 if suffix == "/tags/new" else 200)
        call(writer, method, f"/v2.0/ports/{port['id']}{suffix}", body, status)

        after, _ = read(app, port["id"], how)
        assert after == truth(app, port["id"]), change
        assert after != before and after["revision_number"] > before["revision_number"], change


@pytest.mark.parametrize("slaac", [False, True])
def test_a_port_losing_its_address_with_a_deleted_subnet_shows_it_at_once(
        apps: tuple[CountingApp, CountingApp], slaac: bool) -> None:
    """Upstream updates such a port (its revision advances) as the subnet goes."""
    app, other = apps
    net, keep = network(app)
    if slaac:
        body = {"network_id": net, "ip_version": 6, "cidr": "2001:db8::/64",
                "ipv6_address_mode": "slaac", "ipv6_ra_mode": "slaac"}
        owner = "compute:nova"
    else:
        body = {"network_id": net, "ip_version": 4, "cidr": "10.8.0.0/24"}
        owner = "network:dhcp"  # whose addresses do not keep a subnet in use
    gone = post(app, "/v2.0/subnets", {"subnet": body})["id"]
    port = post(app, "/v2.0/ports", {"port": {"network_id": net, "device_owner": owner,
                                              "fixed_ips": [{"subnet_id": keep},
                                                            {"subnet_id": gone}]}})
    assert {ip["subnet_id"] for ip in port["fixed_ips"]} == {keep, gone}
    before, _ = shown(app, port["id"])
    before, _ = shown(app, port["id"])

    call(other, "DELETE", f"/v2.0/subnets/{gone}", status=204)
    after, _ = shown(app, port["id"])
    assert [ip["subnet_id"] for ip in after["fixed_ips"]] == [keep]
    assert after == truth(app, port["id"])
    assert after["revision_number"] > before["revision_number"]


@pytest.mark.parametrize("how", ["shown", "listed"])
def test_what_is_not_the_ports_own_is_read_on_every_read(
        apps: tuple[CountingApp, CountingApp], how: str) -> None:
    """Its network's QoS policy and its trunk belong to other resources."""
    app, other = apps
    net, _ = network(app)
    parent = post(app, "/v2.0/ports", {"port": {"network_id": net}})
    sub = post(app, "/v2.0/ports", {"port": {"network_id": net}})
    read(app, parent["id"], how)
    read(app, parent["id"], how)

    policy = post(other, "/v2.0/qos/policies", {"policy": {"name": "q"}})["id"]
    call(other, "PUT", f"/v2.0/networks/{net}", {"network": {"qos_policy_id": policy}})
    trunk = post(other, "/v2.0/trunks", {"trunk": {"port_id": parent["id"]}})["id"]
    call(other, "PUT", f"/v2.0/trunks/{trunk}/add_subports", {"sub_ports": [
        {"port_id": sub["id"], "segmentation_type": "vlan", "segmentation_id": 7}]})

    after, statements = read(app, parent["id"], how)
    assert not reads_own_tables(statements)
    assert after["qos_network_policy_id"] == policy
    assert after["trunk_details"] == {"trunk_id": trunk, "sub_ports": [
        {"port_id": sub["id"], "segmentation_type": "vlan", "segmentation_id": 7,
         "mac_address": sub["mac_address"]}]}
    assert after == truth(app, parent["id"])


def test_a_deleted_port_is_not_found_though_remembered(
        apps: tuple[CountingApp, CountingApp]) -> None:
    app, other = apps
    net, _ = network(app)
    port = post(app, "/v2.0/ports", {"port": {"network_id": net}})
    shown(app, port["id"])
    call(other, "DELETE", f"/v2.0/ports/{port['id']}", status=204)
    assert call(app, "GET", f"/v2.0/ports/{port['id']}", status=404)[
        "NeutronError"]["type"] == "PortNotFound"
    assert port["id"] not in memo(app)._entries


def test_an_update_that_does_not_commit_leaves_nothing_remembered(
        apps: tuple[CountingApp, CountingApp]) -> None:
    app, _ = apps
    net, _ = network(app)
    port = post(app, "/v2.0/ports", {"port": {"network_id": net, "tags": ["kept"]}})
    memo(app).clear()
    plugin = app.api.plugin

    def refuse(*args: Any) -> None:
        raise RuntimeError("a driver's precommit failed")
    precommit, plugin.ml2.precommit = plugin.ml2.precommit, refuse
    wants, plugin.ml2.wants = plugin.ml2.wants, lambda *args: True
    try:
        res = app.client.simulate_put(f"/v2.0/ports/{port['id']}", headers=ADMIN, json={
            "port": {"allowed_address_pairs": [{"ip_address": "10.3.3.3"}]}})
        assert res.status_code == 500
    finally:
        plugin.ml2.precommit, plugin.ml2.wants = precommit, wants
    # (the update read the committed port first, as any show would)
    assert memo(app)._entries[port["id"]][0] == port["revision_number"]
    after, _ = shown(app, port["id"])
    assert after["allowed_address_pairs"] == [] and after == truth(app, port["id"])


def test_the_memo_forgets_its_oldest_entries_past_its_size() -> None:
    small = RowMemo(t.ports, size=3)
    for i in range(5):
        small.put(f"p{i}", (1, ()))
    small.put("p3", (2, ()))  # written again: the newest
    assert list(small._entries) == ["p2", "p4", "p3"]


def test_a_page_of_ports_listed_again_is_their_rows_alone(
        apps: tuple[CountingApp, CountingApp]) -> None:
    app, _ = apps
    net, _ = network(app)
    group = post(app, "/v2.0/security-groups", {"security_group": {"name": "g"}})["id"]
    made = [post(app, "/v2.0/ports", {"port": {
        "network_id": net, "tags": [f"t{i}"], "security_groups": [group],
        "allowed_address_pairs": [{"ip_address": f"10.1.{i}.0/24"}],
        "extra_dhcp_opts": [{"opt_name": "tftp-server", "opt_value": f"10.0.0.{i}"}]}})
        for i in range(3)]
    memo(app).clear()  # as a server that did not make them

    first, statements = listed(app)
    assert reads_own_tables(statements)
    again, statements = listed(app)
    assert again == first
    assert not reads_own_tables(statements)
    assert {p["id"]: p for p in made} == again
    assert all(again[p] == truth(app, p) for p in again)


def test_a_page_reads_the_own_rows_of_its_changed_ports_alone(
        apps: tuple[CountingApp, CountingApp]) -> None:
    app, other = apps
    net, _ = network(app)
    ports = [post(app, "/v2.0/ports", {"port": {"network_id": net, "tags": ["old"]}})["id"]
             for _ in range(3)]
    listed(app)
    call(other, "PUT", f"/v2.0/ports/{ports[1]}/tags", {"tags": ["new"]})

    after, statements = listed(app)
    own = [s for s in statements if reads_own_tables([s])]
    # one id bound in each: the changed port's
    assert len(own) == len(OWN_TABLES)
    assert all(re.search(r" IN \([^,]+\)$", s) for s in own), own
    assert after[ports[1]]["tags"] == ["new"] and after[ports[0]]["tags"] == ["old"]
    assert all(after[p] == truth(app, p) for p in ports)


def test_a_page_larger_than_the_memo_reads_its_children_and_remembers_nothing(
        apps: tuple[CountingApp, CountingApp]) -> None:
    app, _ = apps
    net, _ = network(app)
    for _ in range(3):
        post(app, "/v2.0/ports", {"port": {"network_id": net}})
    memo(app).clear()
    memo(app).size = 2
    first, _ = listed(app)
    again, statements = listed(app)
    assert reads_own_tables(statements) and again == first
    assert len(memo(app)) == 0
    one, statements = listed(app, "?limit=2")
    assert len(one) == 2 and len(memo(app)) == 2


def test_an_answer_listed_again_copies_the_dicts_it_built(
        apps: tuple[CountingApp, CountingApp]) -> None:
    """A port whose row and own rows did not change comes into the next
    API answer as it was built, copied at the top for what the request
    adds; a list for anything else (RPC handlers annotate addresses in
    place) neither takes those dicts nor changes them."""
    app, _ = apps
    net, _ = network(app)
    made = post(app, "/v2.0/ports", {"port": {"network_id": net, "tags": ["t"],
                                              "binding:host_id": "host-1"}})
    memo(app).clear()
    plugin = app.api.plugin
    first, _ = plugin.list(Context.admin(), "ports", ListQuery(answer=True))
    assert len(memo(app).built) == 1
    again, _ = plugin.list(Context.admin(), "ports", ListQuery(answer=True))
    assert again == first and again[0] is not first[0]
    assert again[0]["fixed_ips"] is first[0]["fixed_ips"]  # copied, not built
    first[0]["trunk_details"] = "added by the request"
    assert "trunk_details" not in plugin.list(Context.admin(), "ports",
                                              ListQuery(answer=True))[0][0]

    for _ in range(2):
        own, _ = plugin.list(Context.admin(), "ports", ListQuery())
        assert own[0]["fixed_ips"] is not first[0]["fixed_ips"]
        own[0]["fixed_ips"][0]["prefixlen"] = 24
        own[0]["tags"].append("added")
    answered, _ = listed(app)
    assert answered[made["id"]] == truth(app, made["id"])
    assert "prefixlen" not in answered[made["id"]]["fixed_ips"][0]
    assert answered[made["id"]]["tags"] == ["t"]


def test_a_status_written_without_a_revision_shows_in_the_next_list(
        apps: tuple[CountingApp, CountingApp]) -> None:
    """An agent's status report changes the row and not the revision: the
    dict built from the old row is not the port's any more."""
    app, _ = apps
    net, _ = network(app)
    made = post(app, "/v2.0/ports", {"port": {"network_id": net}})
    listed(app)
    before, _ = listed(app)
    with app.api.plugin.db.writer() as conn:
        conn.execute(sa.update(t.ports).where(t.ports.c.id == made["id"]).values(status="ACTIVE"))
    after, _ = listed(app)
    assert before[made["id"]]["status"] == "DOWN" and after[made["id"]]["status"] == "ACTIVE"
    assert after[made["id"]]["revision_number"] == before[made["id"]]["revision_number"]
    assert after[made["id"]] == truth(app, made["id"])
