"""JSON nesting is bounded: a body deeper than any resource takes is a 400
before anything walks it recursively."""
from __future__ import annotations

import requests

from tests.api import _helpers as h
from tests.conftest import Server


def _neutron_error(resp: requests.Response, status: int, kind: str) -> str:
    return h.error((resp.status_code, resp.json()), status, kind)


def test_a_deeply_nested_body_is_400_before_anything_reads_it(server: Server, admin) -> None:
    net = h.network(admin)
    # Built as text: the client's own JSON encoder would not go this deep.
    profile = '{"a": ' * 1000 + "{}" + "}" * 1000
    body = f'{{"port": {{"network_id": "{net["id"]}", "binding:profile": {profile}}}}}'
    resp = requests.post(server.url + "/v2.0/ports", data=body, timeout=30,
                         headers={"Content-Type": "application/json"})
    assert "nested" in _neutron_error(resp, 400, "HTTPBadRequest")


def test_nesting_is_bounded_just_past_what_a_body_needs(server: Server, admin) -> None:
    """A member ignores keys beside its own: only the depth tells the two apart."""
    net = h.network(admin)

    def put(depth: int) -> requests.Response:
        padding = "[" * (depth - 1) + "]" * (depth - 1)
        return requests.put(f"{server.url}/v2.0/networks/{net['id']}", timeout=30,
                            data=f'{{"network": {{"name": "deep"}}, "padding": {padding}}}',
                            headers={"Content-Type": "application/json"})
    assert put(32).status_code == 200
    _neutron_error(put(33), 400, "HTTPBadRequest")
