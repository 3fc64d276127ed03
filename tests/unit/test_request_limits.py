"""The pure parts of the request limits: reading a body under a limit,
shortening quoted values, measuring nesting, the RSGI scope's environ."""
from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from neutrino.api.hooks.body import _depth_exceeds
from neutrino.api.hooks.translation import shortened
from neutrino.api.limits import TooLarge, read_body
from neutrino.cmd.front import wsgi_environ


class Trickle(io.RawIOBase):
    """A stream that gives a few bytes a read, as a socket does."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, size: int = -1) -> bytes:
        chunk, self.data = self.data[:3], self.data[3:]
        return chunk


def test_a_declared_length_over_the_limit_is_refused_without_reading() -> None:
    stream = Trickle(b"x" * 100)
    with pytest.raises(TooLarge):
        read_body(stream, 11, 10)
    assert len(stream.data) == 100


def test_a_body_of_unknown_length_is_read_only_just_past_the_limit() -> None:
    stream = Trickle(b"x" * 100)
    with pytest.raises(TooLarge):
        read_body(stream, None, 10)
    assert len(stream.data) >= 100 - 12


def test_a_body_is_read_whole_from_small_reads() -> None:
    assert read_body(Trickle(b"0123456789"), 10, 10) == b"0123456789"
    assert read_body(Trickle(b"0123456789"), None, 10) == b"0123456789"


def test_a_short_body_ends_where_the_client_stopped() -> None:
    assert read_body(Trickle(b"0123"), 10, 10) == b"0123"


def test_ordinary_messages_are_unchanged() -> None:
    message = ("Unable to complete operation on network 4f5c3d8e-8a0e-4a47-9c52-"
               "0cbb0a1b2c3d. There are one or more ports still in use on the network.")
    assert shortened(message) == message


def test_a_long_value_keeps_a_prefix_and_its_quotes() -> None:
    assert shortened(f"'{'v' * 10_000}' is not a valid UUID") == \
        f"'{'v' * 50}...' is not a valid UUID"


def test_a_long_message_of_short_words_is_bounded() -> None:
    assert len(shortened("ab " * 100_000)) < 1100


@pytest.mark.parametrize("data, deepest", [
    ({}, 1), ([], 1), (1, 0), ({"a": [1, {"b": "c"}]}, 3), ([[[[]]]], 4),
])
def test_depth_is_the_deepest_nesting_of_lists_and_objects(data: object, deepest: int) -> None:
    assert not _depth_exceeds(data, deepest)
    assert _depth_exceeds(data, deepest - 1) == (deepest > 0)


def test_depth_of_a_very_deep_body_is_measured_without_recursion() -> None:
    data: list = []
    for _ in range(100_000):
        data = [data]
    assert _depth_exceeds(data, 32)


def test_the_environ_of_an_rsgi_request() -> None:
    headers = {"content-type": "application/json", "content-length": "2",
               "x-auth-token": "t", "transfer-encoding": "chunked"}
    scope = SimpleNamespace(
        method="PUT", path="/v2.0/networks/a%20b", query_string="fields=id",
        server="127.0.0.1:9696", client="127.0.0.1:40000", http_version="1.1",
        scheme="http", headers=SimpleNamespace(items=lambda: list(headers.items())))
    environ = wsgi_environ(scope, b"{}")
    assert environ["PATH_INFO"] == "/v2.0/networks/a b"
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("127.0.0.1", "9696")
    assert environ["CONTENT_TYPE"] == "application/json"
    assert environ["CONTENT_LENGTH"] == "2" and environ["wsgi.input"].read() == b"{}"
    assert environ["HTTP_X_AUTH_TOKEN"] == "t"
    assert "HTTP_TRANSFER_ENCODING" not in environ and "HTTP_CONTENT_LENGTH" not in environ
