"""Paths reach the app as a WSGI server would hand them over (PEP 3333):
percent-decoded once, as the latin-1 text of their bytes, whatever
characters they hold, under the API workers' front (``cmd/front.py``)."""
from __future__ import annotations

import requests

from tests.conftest import Server

HEADERS = {"X-Project-Id": "paths", "X-Roles": "admin"}


def test_an_id_beyond_latin1_is_not_found_not_a_crash(server: Server) -> None:
    resp = requests.get(server.url + "/v2.0/networks/2%F3%91%9D%AB9Pu%C2%A4%04%C3%BD",
                        headers=HEADERS, timeout=10)
    assert resp.status_code == 404, resp.text
    assert resp.json()["NeutronError"]["type"] == "NetworkNotFound"
    assert "\U000d176b" in resp.json()["NeutronError"]["message"]


def test_a_path_is_percent_decoded_once(server: Server) -> None:
    resp = requests.delete(server.url + "/v2.0/networks/a%2541", headers=HEADERS, timeout=10)
    assert resp.status_code == 404, resp.text
    assert "a%41" in resp.json()["NeutronError"]["message"]
