"""Tags are their exact text on every backend.

On MariaDB the default collation made "a" and "A" (or "Ü" and "ü") one
primary key: setting both crashed with a duplicate key (found by the
fuzzing suite), and a tag filter matched tags SQLite and PostgreSQL keep
apart.
"""
from __future__ import annotations

from typing import Any, Callable

NETS = "/v2.0/networks"


def test_tags_differing_in_case_are_two_tags(db_url: str, start_server: Callable[..., Any],
                                             client_for: Callable[..., Any]) -> None:
    client = client_for(start_server(db_url))
    status, body = client.post(NETS, {"network": {"name": "n", "tags": ["Ü", "ü"]}})
    assert status == 201, body
    net = body["network"]
    assert sorted(net["tags"]) == ["Ü", "ü"]
    status, body = client.put(f"{NETS}/{net['id']}/tags", {"tags": ["A", "a"]})
    assert (status, sorted(body["tags"])) == (200, ["A", "a"])
    assert client.put(f"{NETS}/{net['id']}/tags/B")[0] == 201
    assert client.put(f"{NETS}/{net['id']}/tags/b")[0] == 201
    assert client.delete(f"{NETS}/{net['id']}/tags/B")[0] == 204
    _, body = client.get(f"{NETS}/{net['id']}")
    assert sorted(body["network"]["tags"]) == ["A", "a", "b"]
    assert [n["id"] for n in client.get(f"{NETS}?tags=a")[1]["networks"]] == [net["id"]]
    assert client.get(f"{NETS}?tags=B")[1]["networks"] == []
