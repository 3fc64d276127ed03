"""The live topology page in a real browser: resources created through the
API appear on the page without a reload, with their neighbours, hosts and
agents; the panel shows an object's attributes and links to its
neighbours; the tracer panel runs a packet through ``POST /v2.0/trace`` and
draws its path; a project's member sees only what the API lets them list;
the page exists only with ``[topology] enabled``."""
from __future__ import annotations

from typing import Any, Iterator

import pytest
import requests
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.select import Select

from neutrino.agents.base import Agent
from tests.browser import ARTEFACTS
from tests.conftest import Client, Server
from tests.dhcp._agents import DhcpAgent
from tests.rpc.bus import OvsAgent, agent_conf, bus
from tests.rpc.conftest import fresh_vhost
from tests.waiting import until

HOST = "topo-host-1"
NETWORK_HOST = "topo-network-node"


@pytest.fixture(scope="module")
def vhost() -> Iterator[str]:
    with fresh_vhost() as name:
        yield name


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("topology"),
                    extra=f"transport_url = {bus(vhost)}\nservice_plugins = router,trace\n"
                          "[ml2]\nmechanism_drivers = openvswitch\n"
                          "[topology]\nenabled = true\npoll_interval = 1\n").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def agent(srv: Server, vhost: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OvsAgent]:
    """An Open vSwitch agent reporting from ``HOST``, so that host's ports bind."""
    reporting = OvsAgent(agent_conf(tmp_path_factory.mktemp("agent"), vhost, HOST,
                                    "[AGENT]\nreport_interval = 1\n"))
    reporting.register()
    reporting.start_reporting()
    try:
        yield reporting
    finally:
        reporting.stop()


class L3Agent(Agent):
    """An L3 agent as the server sees it: it reports state, so routers are
    scheduled to it."""
    agent_type = "L3 agent"
    binary = "neutron-l3-agent"
    topic = "l3_agent"

    def configurations(self) -> dict[str, Any]:
        return {"agent_mode": "legacy"}


@pytest.fixture(scope="module")
def network_node(srv: Server, vhost: str,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Agent, Agent]]:
    """A DHCP and an L3 agent reporting from ``NETWORK_HOST``."""
    tmp = tmp_path_factory.mktemp("network-node")
    dhcp = DhcpAgent(tmp, vhost, host=NETWORK_HOST, report_interval=1).start()
    l3 = L3Agent(agent_conf(tmp, vhost, NETWORK_HOST, "[AGENT]\nreport_interval = 1\n"))
    l3.register()
    l3.start_reporting()
    try:
        yield dhcp, l3
    finally:
        l3.stop()
        dhcp.stop()


def served_by(admin: Client, agent_type: str, what: str, oid: str) -> str:
    """The id of ``NETWORK_HOST``'s agent of ``agent_type``, once it serves
    ``oid`` (scheduled by the server, or else asked to by the admin)."""
    agent = admin.get(f"/v2.0/agents?host={NETWORK_HOST}&agent_type={agent_type}")[1]["agents"][0]
    path = f"/v2.0/agents/{agent['id']}/{what}"
    key = what.split("-")[1]
    if oid not in {o["id"] for o in admin.get(path)[1][key]}:
        body = {"network_id": oid} if key == "networks" else {"router_id": oid}
        assert admin.post(path, body)[0] in (201, 200)
    return str(agent["id"])


def node(browser: WebDriver, kind: str, oid: str) -> WebElement | None:
    found = browser.find_elements(By.CSS_SELECTOR, f'#graph g.node[data-kind="{kind}"][data-id="{oid}"]')
    return found[0] if found else None


def shown(browser: WebDriver, kind: str, oid: str, timeout: float = 20) -> WebElement:
    return until(lambda: node(browser, kind, oid), timeout)


def edge(browser: WebDriver, a: str, b: str) -> bool:
    return bool(browser.find_elements(By.CSS_SELECTOR, f'path.edge[data-from="{a}"][data-to="{b}"]')
                or browser.find_elements(By.CSS_SELECTOR, f'path.edge[data-from="{b}"][data-to="{a}"]'))


def cell(browser: WebDriver, attribute: str) -> str | None:
    """The panel's value of ``attribute``; None while the panel is redrawn."""
    try:
        return str(browser.find_element(
            By.CSS_SELECTOR, f'#attributes tr[data-attribute="{attribute}"] td + td').text)
    except (NoSuchElementException, StaleElementReferenceException):
        return None


def created(client: Client, plural: str, body: dict[str, Any]) -> dict[str, Any]:
    singular = next(iter(body))
    status, answer = client.post(f"/v2.0/{plural}", body)
    assert status == 201, answer
    return answer[singular]


def test_the_page_is_not_served_unless_enabled(server: Server) -> None:
    resp = requests.get(server.url + "/topology", timeout=10)
    assert resp.status_code == 404
    assert resp.json()["NeutronError"]["type"] == "HTTPNotFound"


def test_the_page_and_its_assets_come_from_the_package(srv: Server) -> None:
    page = requests.get(srv.url + "/topology", timeout=10)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert 'data-poll-ms="1000"' in page.text and "/topology/topology.js" in page.text
    # Its own script and this server only: a token it holds goes nowhere else.
    assert page.headers["Content-Security-Policy"].startswith("default-src 'self'")
    script = requests.get(srv.url + "/topology/topology.js", timeout=10)
    assert script.status_code == 200 and "javascript" in script.headers["Content-Type"]
    missing = requests.get(srv.url + "/topology/../etc/passwd", timeout=10)
    assert missing.status_code == 404
    assert requests.get(srv.url + "/topology/other.js", timeout=10).json()[
        "NeutronError"]["type"] == "HTTPNotFound"


def test_resources_created_through_the_api_appear_live_with_their_neighbours(
        srv: Server, agent: OvsAgent, network_node: tuple[Agent, Agent],
        browser: WebDriver) -> None:
    admin = Client(srv.url)
    until(lambda: admin.get(f"/v2.0/agents?host={HOST}")[1]["agents"])
    until(lambda: len(admin.get(f"/v2.0/agents?host={NETWORK_HOST}")[1]["agents"]) == 2)
    browser.get(srv.url + "/topology")
    until(lambda: browser.find_element(By.ID, "status").get_attribute("data-state") == "ok")
    # Set once: a reload of the page would forget it.
    browser.execute_script("window.notReloaded = true;")

    public = created(admin, "networks", {"network": {"name": "topo-public", "router:external": True}})
    created(admin, "subnets", {"subnet": {"network_id": public["id"], "cidr": "203.0.113.0/24",
                                          "ip_version": 4, "name": "topo-public-v4"}})
    net = created(admin, "networks", {"network": {"name": "topo-private"}})
    sub = created(admin, "subnets", {"subnet": {"network_id": net["id"], "cidr": "10.77.0.0/24",
                                                "ip_version": 4, "name": "topo-private-v4"}})
    router = created(admin, "routers", {"router": {
        "name": "topo-router", "external_gateway_info": {"network_id": public["id"]}}})
    status, _ = admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                          {"subnet_id": sub["id"]})
    assert status == 200
    group = created(admin, "security-groups", {"security_group": {"name": "topo-web"}})
    vm = created(admin, "ports", {"port": {"network_id": net["id"], "name": "topo-vm",
                                           "binding:host_id": HOST,
                                           "security_groups": [group["id"]]}})
    fip = created(admin, "floatingips", {"floatingip": {
        "floating_network_id": public["id"], "port_id": vm["id"]}})

    assert "topo-private" in shown(browser, "network", net["id"]).text
    assert "10.77.0.0/24" in shown(browser, "subnet", sub["id"]).text
    # the page may first draw the router from a poll taken before its gateway port was read
    router_node = until(lambda: n if "gw 203.0.113." in (n := shown(browser, "router",
                                                                  router["id"])).text else None,
                        20)
    assert "topo-router" in router_node.text
    vm_node = shown(browser, "port", vm["id"])
    assert vm["fixed_ips"][0]["ip_address"] in vm_node.text
    assert vm_node.get_attribute("data-status") == vm["status"]
    assert fip["floating_ip_address"] in shown(browser, "floatingip", fip["id"]).text
    assert "topo-web" in shown(browser, "security_group", group["id"]).text
    assert shown(browser, "host", HOST)
    ovs = admin.get(f"/v2.0/agents?host={HOST}")[1]["agents"][0]
    assert "Open vSwitch agent" in shown(browser, "agent", ovs["id"]).text
    # Gateway, interface, floating IP, host and agent are drawn as edges.
    assert until(lambda: edge(browser, f"router:{router['id']}", f"network:{public['id']}"))
    interface = admin.get(f"/v2.0/ports?device_id={router['id']}"
                          "&device_owner=network:router_interface")[1]["ports"][0]
    assert edge(browser, f"port:{interface['id']}", f"router:{router['id']}")
    assert edge(browser, f"port:{interface['id']}", f"subnet:{sub['id']}")
    assert edge(browser, f"floatingip:{fip['id']}", f"port:{vm['id']}")
    assert edge(browser, f"port:{vm['id']}", f"host:{HOST}")
    assert edge(browser, f"port:{vm['id']}", f"security_group:{group['id']}")
    assert edge(browser, f"agent:{ovs['id']}", f"host:{HOST}")
    # The agents that serve the network and the router.
    dhcp_id = served_by(admin, "DHCP agent", "dhcp-networks", net["id"])
    l3_id = served_by(admin, "L3 agent", "l3-routers", router["id"])
    assert until(lambda: edge(browser, f"agent:{dhcp_id}", f"network:{net['id']}"))
    assert until(lambda: edge(browser, f"agent:{l3_id}", f"router:{router['id']}"))
    assert edge(browser, f"agent:{l3_id}", f"host:{NETWORK_HOST}")

    # The panel: the port's attributes and links to its neighbours.
    vm_node.click()
    rows = {r.get_attribute("data-attribute"): r.find_elements(By.TAG_NAME, "td")[1].text
            for r in browser.find_elements(By.CSS_SELECTOR, "#attributes tr")}
    assert rows["id"] == vm["id"] and rows["binding:host_id"] == HOST
    assert rows["status"] == vm["status"]
    links = {a.get_attribute("data-key"): a for a in browser.find_elements(By.CSS_SELECTOR, "#neighbours a")}
    assert {f"subnet:{sub['id']}", f"host:{HOST}", f"security_group:{group['id']}",
            f"floatingip:{fip['id']}"} <= set(links)
    links[f"subnet:{sub['id']}"].click()
    assert browser.find_element(By.CSS_SELECTOR, '#attributes tr[data-attribute="cidr"] td + td'
                                ).text == "10.77.0.0/24"
    assert f"network:{net['id']}" in {a.get_attribute("data-key") for a in
                                      browser.find_elements(By.CSS_SELECTOR, "#neighbours a")}

    ARTEFACTS.mkdir(exist_ok=True)
    vm_node = shown(browser, "port", vm["id"])
    vm_node.click()
    browser.save_screenshot(str(ARTEFACTS / "topology.png"))

    # A change and a deletion show without a reload.
    assert admin.put(f"/v2.0/networks/{net['id']}", {"network": {"name": "topo-renamed"}})[0] == 200
    until(lambda: "topo-renamed" in (node(browser, "network", net["id"]) or vm_node).text)
    shown(browser, "floatingip", fip["id"]).click()
    assert admin.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": None}})[0] == 200
    until(lambda: cell(browser, "port_id") == "")
    assert admin.delete(f"/v2.0/floatingips/{fip['id']}")[0] == 204
    until(lambda: node(browser, "floatingip", fip["id"]) is None)
    assert browser.find_element(By.CSS_SELECTOR, "#panel .hint").text == "This object is gone."
    assert browser.execute_script("return window.notReloaded === true;")


def test_a_member_sees_only_what_the_api_lists_for_their_project(
        srv: Server, browser: WebDriver) -> None:
    mine = created(Client(srv.url, "topo-p1"), "networks", {"network": {"name": "topo-mine"}})
    theirs = created(Client(srv.url, "topo-p2"), "networks", {"network": {"name": "topo-theirs"}})
    # A link to an object opens the page with its panel shown.
    browser.get(srv.url + f"/topology?project=topo-p1&roles=member#network:{mine['id']}")
    shown(browser, "network", mine["id"])
    assert until(lambda: browser.find_elements(
        By.CSS_SELECTOR, '#attributes tr[data-attribute="name"] td + td'))[0].text == "topo-mine"
    assert node(browser, "network", theirs["id"]) is None
    # Agents and hosts are the admin's (the API's policy refuses them).
    assert browser.find_elements(By.CSS_SELECTOR, '#graph g.node[data-kind="agent"]') == []
    assert browser.find_elements(By.CSS_SELECTOR, '#graph g.node[data-kind="host"]') == []



def path_nodes(browser: WebDriver, cls: str) -> set[str]:
    return {str(g.get_attribute("data-key"))
            for g in browser.find_elements(By.CSS_SELECTOR, f"#graph g.node.{cls}")}


def trace_from_the_panel(browser: WebDriver, source: str, to: str, protocol: str) -> str:
    """Fill the tracer, run it, and wait for its verdict."""
    until(lambda: browser.find_elements(By.CSS_SELECTOR, f'#trace-source option[value="{source}"]'))
    Select(browser.find_element(By.ID, "trace-source")).select_by_value(source)
    box = browser.find_element(By.ID, "trace-to")
    box.clear()
    box.send_keys(to)
    Select(browser.find_element(By.ID, "trace-protocol")).select_by_visible_text(protocol)
    browser.find_element(By.ID, "trace-run").click()
    script = "const v = document.getElementById('trace-verdict'); return v && v.dataset.verdict;"
    return str(until(lambda: (v := browser.execute_script(script)) not in (None, "pending") and v,
                     20))


def test_the_tracer_panel_lists_the_hops_and_draws_the_path(
        srv: Server, browser: WebDriver) -> None:
    admin = Client(srv.url)
    net = created(admin, "networks", {"network": {"name": "topo-trace"}})
    created(admin, "subnets", {"subnet": {"network_id": net["id"], "cidr": "10.78.0.0/24",
                                          "ip_version": 4}})
    closed = created(admin, "security-groups", {"security_group": {"name": "topo-closed"}})
    a = created(admin, "ports", {"port": {"network_id": net["id"], "name": "topo-tr-a"}})
    b = created(admin, "ports", {"port": {"network_id": net["id"], "name": "topo-tr-b"}})
    c = created(admin, "ports", {"port": {"network_id": net["id"], "name": "topo-tr-c",
                                          "security_groups": [closed["id"]]}})
    browser.get(srv.url + "/topology")
    shown(browser, "port", c["id"])

    assert trace_from_the_panel(browser, f"port:{a['id']}", b["fixed_ips"][0]["ip_address"],
                                "icmp") == "allowed"
    expected = admin.post("/v2.0/trace", {"trace": {
        "port_id": a["id"], "destination_ip": b["fixed_ips"][0]["ip_address"],
        "protocol": "icmp"}})[1]["trace"]
    items = browser.find_elements(By.CSS_SELECTOR, "#trace-hops li")
    assert [li.get_attribute("data-kind") for li in items] == [h["kind"] for h in expected["hops"]]
    ingress = items[-1]
    assert expected["hops"][-1]["security_group_rule_id"] in ingress.text
    assert ingress.get_attribute("data-model") == "passed"
    on_path = until(lambda: (k := path_nodes(browser, "on-path")) and k)
    assert {f"port:{a['id']}", f"port:{b['id']}", f"network:{net['id']}"} <= on_path
    assert path_nodes(browser, "path-stop") == set()
    assert browser.find_elements(By.CSS_SELECTOR, "#graph path.edge.on-path")
    ARTEFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTEFACTS / "topology-trace.png"))

    # A port whose group admits nothing: the hop that stops it, drawn as the stop.
    assert trace_from_the_panel(browser, f"port:{a['id']}", c["fixed_ips"][0]["ip_address"],
                                "icmp") == "denied"
    last = browser.find_elements(By.CSS_SELECTOR, "#trace-hops li")[-1]
    assert last.get_attribute("data-kind") == "security_group_ingress"
    assert last.get_attribute("data-model") == "denied"
    assert "no ingress rule" in last.text
    stops = until(lambda: (k := path_nodes(browser, "path-stop")) and k)
    assert {f"port:{c['id']}", f"security_group:{closed['id']}"} <= stops
    browser.save_screenshot(str(ARTEFACTS / "topology-trace-denied.png"))

    # Live: these ports are bound to no host, so no agent can run the packet;
    # the panel says the hosts were not asked and lists why.
    browser.find_element(By.ID, "trace-live").click()
    assert trace_from_the_panel(browser, f"port:{a['id']}", b["fixed_ips"][0]["ip_address"],
                                "icmp") == "allowed"
    live = browser.find_element(By.ID, "trace-live-verdict")
    assert live.get_attribute("data-agrees") == "false"
    reasons = [li.text for li in browser.find_elements(By.CSS_SELECTOR,
                                                        "#trace-disagreements li")]
    assert any("bound to no host" in r for r in reasons), reasons
    browser.find_element(By.ID, "trace-live").click()

    # What the API refuses is shown as its error, and nothing stays drawn.
    assert trace_from_the_panel(browser, f"port:{a['id']}", "not-an-address", "icmp") == "error"
    assert "destination_ip" in browser.find_element(By.ID, "trace-verdict").text
    assert path_nodes(browser, "on-path") == set()
