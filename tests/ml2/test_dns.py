"""The ``dns`` extension driver (``dns-integration``), over the API.

Two servers load the driver: one with ``[DEFAULT] dns_domain = example.org.``
(port names enabled) and one with upstream's default ``openstacklocal``,
where a port's ``dns_name`` is accepted but not kept.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.conftest import Client, Server

DRIVER = "[ml2]\nextension_drivers = dns\n"


@pytest.fixture(scope="module")
def dns_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("dns"),
                 extra="dns_domain = example.org.\n" + DRIVER).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def default_domain_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("dns-default"), extra=DRIVER).start()
    yield srv
    srv.stop()


@pytest.fixture
def member(dns_server: Server) -> Client:
    return Client(dns_server.url, uuid.uuid4().hex, "member")


def _net(client: Client, v6: bool = False, **extra: object) -> dict:
    status, body = client.post("/v2.0/networks", {"network": {"name": "dns", **extra}})
    assert status == 201, body
    net = body["network"]
    status, body = client.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.7.0.0/24"}})
    assert status == 201, body
    if v6:
        status, body = client.post("/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "ip_version": 6, "cidr": "fd00:7::/64"}})
        assert status == 201, body
    return net


def _port(client: Client, net: dict, **extra: object) -> dict:
    status, body = client.post("/v2.0/ports", {"port": {"network_id": net["id"], **extra}})
    assert status == 201, body
    return body["port"]


def _ips(port: dict) -> list[str]:
    return [ip["ip_address"] for ip in port["fixed_ips"]]


def _error(status: int, body: dict) -> tuple[int, str, str]:
    return status, body["NeutronError"]["type"], body["NeutronError"]["message"]


# -- presence -----------------------------------------------------------------------

def test_extension_is_listed_only_when_the_driver_is_loaded(dns_server: Server,
                                                            server: Server) -> None:
    status, body = Client(dns_server.url).get("/v2.0/extensions/dns-integration")
    assert status == 200
    assert body["extension"] == {"alias": "dns-integration", "name": "DNS Integration",
                                 "description": "Provides integration with DNS.",
                                 "updated": "2015-08-15T18:00:00-00:00", "links": []}
    assert Client(server.url).get("/v2.0/extensions/dns-integration")[0] == 404
    aliases = {e["alias"] for e in Client(server.url).get("/v2.0/extensions")[1]["extensions"]}
    assert "dns-integration" not in aliases


def test_attributes_appear_only_when_the_driver_is_loaded(member: Client,
                                                          server: Server) -> None:
    net = _net(member)
    port = _port(member, net)
    assert net["dns_domain"] == ""
    assert port["dns_name"] == "" and len(port["dns_assignment"]) == 1

    plain = Client(server.url, uuid.uuid4().hex, "member")
    pnet = _net(plain)
    pport = _port(plain, pnet)
    assert "dns_domain" not in pnet
    assert "dns_name" not in pport and "dns_assignment" not in pport
    status, body = plain.post("/v2.0/ports", {"port": {"network_id": pnet["id"],
                                                       "dns_name": "vm1"}})
    assert status == 400 and "dns_name" in body["NeutronError"]["message"]


# -- dns_assignment -------------------------------------------------------------------

def test_default_hostname_for_every_fixed_ip(member: Client) -> None:
    net = _net(member, v6=True)
    port = _port(member, net)
    v4, v6 = _ips(port)
    v6_host = "host-" + v6.replace(":", "-")
    v4_host = "host-" + v4.replace(".", "-")
    assert port["dns_name"] == ""
    assert sorted(port["dns_assignment"], key=lambda a: a["ip_address"]) == sorted([
        {"hostname": v4_host, "ip_address": v4, "fqdn": f"{v4_host}.example.org."},
        {"hostname": v6_host, "ip_address": v6, "fqdn": f"{v6_host}.example.org."},
    ], key=lambda a: a["ip_address"])
    shown = member.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    assert shown["dns_assignment"] == port["dns_assignment"]


def test_dns_name_names_every_fixed_ip_lower_cased(member: Client) -> None:
    net = _net(member, v6=True)
    port = _port(member, net, dns_name="My-VM")
    assert port["dns_name"] == "my-vm"
    assert {(a["ip_address"], a["hostname"], a["fqdn"]) for a in port["dns_assignment"]} == {
        (ip, "my-vm", "my-vm.example.org.") for ip in _ips(port)}
    listed = member.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"]
    assert listed[0]["dns_assignment"] == port["dns_assignment"]


def test_fqdn_dns_name_within_the_configured_domain(member: Client) -> None:
    net = _net(member)
    port = _port(member, net, dns_name="vm2.example.org.")
    assert port["dns_assignment"] == [{"hostname": "vm2.example.org.",
                                       "ip_address": _ips(port)[0],
                                       "fqdn": "vm2.example.org."}]


def test_default_domain_ignores_dns_name(default_domain_server: Server) -> None:
    client = Client(default_domain_server.url, uuid.uuid4().hex, "member")
    net = _net(client)
    port = _port(client, net, dns_name="vm3")
    ip = _ips(port)[0]
    host = "host-" + ip.replace(".", "-")
    assert port["dns_name"] == ""
    assert port["dns_assignment"] == [{"hostname": host, "ip_address": ip,
                                       "fqdn": f"{host}.openstacklocal."}]
    # Still validated, as upstream does whatever the domain.
    status, _ = client.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                     "dns_name": "a_b"}})
    assert status == 400


def test_dns_assignment_is_read_only(member: Client) -> None:
    net = _net(member)
    status, _ = member.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "dns_assignment": [{"hostname": "x"}]}})
    assert status == 400
    port = _port(member, net)
    status, _ = member.put(f"/v2.0/ports/{port['id']}",
                           {"port": {"dns_assignment": [{"hostname": "x"}]}})
    assert status == 400


# -- validation -----------------------------------------------------------------------

LONG_LABEL = "a" * 64
TOO_LONG = "a." * 128 + "a"  # 257 characters
BAD_NAMES = [
    ("a_b", ("Invalid input for dns_name. Reason: 'a_b' not a valid PQDN or FQDN. Reason: "
             "Name 'a_b' must be 1-63 characters long, each of which can only be "
             "alphanumeric or a hyphen.")),
    (LONG_LABEL, (f"Invalid input for dns_name. Reason: '{LONG_LABEL}' not a valid PQDN or "
                  f"FQDN. Reason: Name '{LONG_LABEL}' must be 1-63 characters long, each of "
                  "which can only be alphanumeric or a hyphen.")),
    ("-vm", ("Invalid input for dns_name. Reason: '-vm' not a valid PQDN or FQDN. Reason: "
             "Name '-vm' must not start or end with a hyphen.")),
    ("vm..x", ("Invalid input for dns_name. Reason: 'vm..x' not a valid PQDN or FQDN. "
               "Reason: Encountered an empty component.")),
    ("vm.123", ("Invalid input for dns_name. Reason: 'vm.123' not a valid PQDN or FQDN. "
                "Reason: TLD '123' must not be all numeric.")),
    (TOO_LONG, (f"Invalid input for dns_name. Reason: '{TOO_LONG}' not a valid PQDN or "
                f"FQDN. Reason: '{TOO_LONG}' exceeds the 255 character FQDN limit.")),
    ("a." * 122 + "a", ("Invalid input for dns_name. Reason: The dns_name passed is a PQDN "
                        "and its size is '245'. The dns_domain option in neutron.conf is set "
                        "to example.org., with a length of '13'. When the two are "
                        "concatenated to form a FQDN (with a '.' at the end), the resulting "
                        "length exceeds the maximum size of '255'.")),
    ("vm.example.com.", ("Invalid input for dns_name. Reason: The dns_name passed is a FQDN. "
                         "Its higher level labels must be equal to the dns_domain option in "
                         "neutron.conf, that has been set to 'example.org.'. It must also "
                         "include one or more valid DNS labels to the left of "
                         "'example.org.'.")),
]


@pytest.mark.parametrize("name,message", BAD_NAMES, ids=[b[0][:12] for b in BAD_NAMES])
def test_bad_dns_name_is_refused_and_nothing_created(member: Client, name: str,
                                                     message: str) -> None:
    net = _net(member)
    status, body = member.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                        "dns_name": name}})
    assert _error(status, body) == (400, "HTTPBadRequest", message)
    assert member.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"] == []


def test_dns_name_must_be_a_string(member: Client) -> None:
    net = _net(member)
    status, body = member.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                        "dns_name": 123}})
    assert _error(status, body) == (
        400, "InvalidInput", "Invalid input for operation: Input value 123 must be string type.")


BAD_DOMAINS = [
    ("example.org", "Invalid input for dns_domain. Reason: 'example.org' is not a FQDN."),
    ("ex_ample.org.", ("Invalid input for dns_domain. Reason: 'ex_ample.org.' not a valid "
                       "PQDN or FQDN. Reason: Name 'ex_ample' must be 1-63 characters long, "
                       "each of which can only be alphanumeric or a hyphen.")),
    ("a." * 127, (f"Invalid input for dns_domain. Reason: '{'a.' * 127}' contains 254 "
                  "characters. Adding a sub-domain will cause it to exceed the maximum "
                  "length of a FQDN of '255'.")),
]


@pytest.mark.parametrize("domain,message", BAD_DOMAINS, ids=[b[0][:12] for b in BAD_DOMAINS])
def test_bad_dns_domain_is_refused_and_nothing_created(member: Client, domain: str,
                                                       message: str) -> None:
    name = uuid.uuid4().hex
    status, body = member.post("/v2.0/networks", {"network": {"name": name,
                                                              "dns_domain": domain}})
    assert _error(status, body) == (400, "HTTPBadRequest", message)
    assert member.get(f"/v2.0/networks?name={name}")[1]["networks"] == []


def test_bad_update_changes_nothing(member: Client) -> None:
    net = _net(member, dns_domain="corp.example.")
    port = _port(member, net, dns_name="keep")
    assert member.put(f"/v2.0/ports/{port['id']}", {"port": {"dns_name": "a_b"}})[0] == 400
    assert member.put(f"/v2.0/networks/{net['id']}",
                      {"network": {"dns_domain": "nodot"}})[0] == 400
    assert member.get(f"/v2.0/ports/{port['id']}")[1]["port"]["dns_name"] == "keep"
    assert member.get(f"/v2.0/networks/{net['id']}")[1]["network"]["dns_domain"] == "corp.example."


# -- updates ----------------------------------------------------------------------------

def test_network_dns_domain_set_changed_and_cleared(member: Client) -> None:
    net = _net(member, dns_domain="Corp.Example.")
    assert net["dns_domain"] == "corp.example."
    path = f"/v2.0/networks/{net['id']}"
    assert member.get(path)[1]["network"]["dns_domain"] == "corp.example."
    status, body = member.put(path, {"network": {"dns_domain": "other.example."}})
    assert status == 200 and body["network"]["dns_domain"] == "other.example."
    status, body = member.put(path, {"network": {"dns_domain": ""}})
    assert status == 200 and body["network"]["dns_domain"] == ""
    assert member.get(path)[1]["network"]["dns_domain"] == ""


def test_port_dns_name_update_renames_and_clearing_restores_defaults(member: Client) -> None:
    net = _net(member)
    port = _port(member, net)
    ip = _ips(port)[0]
    path = f"/v2.0/ports/{port['id']}"
    status, body = member.put(path, {"port": {"dns_name": "web"}})
    assert status == 200
    assert body["port"]["dns_name"] == "web"
    assert body["port"]["dns_assignment"] == [{"hostname": "web", "ip_address": ip,
                                               "fqdn": "web.example.org."}]
    status, body = member.put(path, {"port": {"name": "unrelated"}})
    assert body["port"]["dns_name"] == "web"
    status, body = member.put(path, {"port": {"dns_name": ""}})
    host = "host-" + ip.replace(".", "-")
    assert body["port"]["dns_assignment"] == [{"hostname": host, "ip_address": ip,
                                               "fqdn": f"{host}.example.org."}]
    assert member.get(path)[1]["port"]["dns_name"] == ""


def test_assignment_follows_fixed_ip_changes(member: Client) -> None:
    net = _net(member)
    port = _port(member, net, dns_name="mover")
    subnet_id = port["fixed_ips"][0]["subnet_id"]
    status, body = member.put(f"/v2.0/ports/{port['id']}", {"port": {"fixed_ips": [
        {"subnet_id": subnet_id, "ip_address": "10.7.0.200"},
        {"subnet_id": subnet_id, "ip_address": "10.7.0.201"}]}})
    assert status == 200, body
    assert sorted(a["ip_address"] for a in body["port"]["dns_assignment"]) == [
        "10.7.0.200", "10.7.0.201"]
    assert {a["fqdn"] for a in body["port"]["dns_assignment"]} == {"mover.example.org."}


# -- filter -----------------------------------------------------------------------------

def test_filter_ports_by_dns_name(member: Client) -> None:
    net = _net(member)
    web = _port(member, net, dns_name="web1")
    db = _port(member, net, dns_name="db1")
    anon = _port(member, net)
    base = f"/v2.0/ports?network_id={net['id']}"
    assert [p["id"] for p in member.get(base + "&dns_name=web1")[1]["ports"]] == [web["id"]]
    assert [p["id"] for p in member.get(base + "&dns_name=DB1")[1]["ports"]] == [db["id"]]
    assert member.get(base + "&dns_name=nobody")[1]["ports"] == []
    both = {p["id"] for p in member.get(base + "&dns_name=web1&dns_name=db1")[1]["ports"]}
    assert both == {web["id"], db["id"]}
    unnamed = {p["id"] for p in member.get(base + "&dns_name=")[1]["ports"]}
    assert unnamed == {anon["id"]}
