"""``OPTIONS`` is answered as upstream answers a method a resource lacks."""
from __future__ import annotations

import requests

from tests.api import _helpers as h
from tests.conftest import Server


def _neutron_error(resp: requests.Response, status: int, kind: str) -> str:
    return h.error((resp.status_code, resp.json()), status, kind)


def test_options_is_405_with_a_neutron_error_and_the_allowed_methods(server: Server) -> None:
    resp = requests.options(server.url + "/v2.0/networks", timeout=10)
    _neutron_error(resp, 405, "HTTPMethodNotAllowed")
    assert set(resp.headers["Allow"].replace(" ", "").split(",")) == {"GET", "POST"}
    resp = requests.options(server.url + "/v2.0/networks/some-id", timeout=10)
    _neutron_error(resp, 405, "HTTPMethodNotAllowed")
    assert set(resp.headers["Allow"].replace(" ", "").split(",")) == {"GET", "PUT", "DELETE"}


def test_options_on_an_unknown_path_is_404(server: Server) -> None:
    resp = requests.options(server.url + "/v2.0/nowhere", timeout=10)
    _neutron_error(resp, 404, "HTTPNotFound")
