"""The topology page behind Keystone, in headless chromium: the page asks
for a token, reads the API with it, and shows what that token's project may
list; a bad token is asked for again."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser import chromium
from tests.conftest import Server
from tests.keystone.conftest import Cloud, authtoken
from tests.waiting import until


@pytest.fixture(scope="module")
def page_server(cloud: Cloud, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("topology-keystone"), auth_strategy="keystone",
                 extra=authtoken(cloud.keystone)
                 + "\n[topology]\nenabled = true\npoll_interval = 1\n").start()
    yield srv
    srv.stop()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[WebDriver]:
    with chromium(tmp_path / "chromium") as driver:
        yield driver


def network(srv: Server, token: str, name: str) -> str:
    resp = requests.post(srv.url + "/v2.0/networks", json={"network": {"name": name}},
                         headers={"X-Auth-Token": token}, timeout=30)
    assert resp.status_code == 201, resp.text
    return str(resp.json()["network"]["id"])


def state(browser: WebDriver) -> str | None:
    return browser.find_element(By.ID, "status").get_attribute("data-state")


def shows(browser: WebDriver, oid: str) -> bool:
    return bool(browser.find_elements(By.CSS_SELECTOR, f'#graph g.node[data-id="{oid}"]'))


def test_the_page_asks_for_a_token_and_shows_what_it_may_list(
        cloud: Cloud, page_server: Server, browser: WebDriver) -> None:
    mine = network(page_server, cloud.member_a.token, "topo-ks-a")
    theirs = network(page_server, cloud.member_b.token, "topo-ks-b")
    # The page itself needs no token; the API it reads does.
    assert requests.get(page_server.url + "/topology", timeout=10).status_code == 200
    assert requests.get(page_server.url + "/v2.0/networks", timeout=10).status_code == 401
    browser.get(page_server.url + "/topology")
    until(lambda: state(browser) == "unauthorized")
    assert browser.find_element(By.ID, "auth").is_displayed()

    browser.find_element(By.ID, "token").send_keys("not-a-token")
    browser.find_element(By.CSS_SELECTOR, "#auth button").click()
    until(lambda: state(browser) == "unauthorized")

    browser.find_element(By.ID, "token").clear()
    browser.find_element(By.ID, "token").send_keys(cloud.member_a.token)
    browser.find_element(By.CSS_SELECTOR, "#auth button").click()
    until(lambda: shows(browser, mine))
    assert state(browser) == "ok" and not browser.find_element(By.ID, "auth").is_displayed()
    assert not shows(browser, theirs)

    browser.execute_script("sessionStorage.setItem('neutrino-token', arguments[0]);",
                           cloud.admin.token)
    browser.refresh()
    until(lambda: shows(browser, mine) and shows(browser, theirs))
