"""The pure parts of the request limits: reading a body under a limit,
shortening quoted values, measuring nesting, the RSGI scope's environ."""
from __future__ import annotations

import asyncio
import contextlib
import io
import threading
from types import SimpleNamespace
from typing import Any, Iterator

import orjson
import pytest

from neutrino import errors
from neutrino.api.hooks.body import check_document
from neutrino.api.hooks.translation import shortened
from neutrino.api.limits import TooLarge, read_body
from neutrino.cmd.front import BodyFirst, wsgi_environ


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


def test_a_policy_rule_name_is_not_a_value_to_shorten() -> None:
    message = ("(rule:update_router and rule:update_router:external_gateway_info:"
               "external_fixed_ips) is disallowed by policy")
    assert shortened(message) == message


def test_ordinary_messages_are_unchanged() -> None:
    message = ("Unable to complete operation on network 4f5c3d8e-8a0e-4a47-9c52-"
               "0cbb0a1b2c3d. There are one or more ports still in use on the network.")
    assert shortened(message) == message


def test_a_long_value_keeps_a_prefix_and_its_quotes() -> None:
    assert shortened(f"'{'v' * 10_000}' is not a valid UUID") == \
        f"'{'v' * 50}...' is not a valid UUID"


def test_a_value_as_long_as_an_attribute_allows_is_quoted_whole() -> None:
    message = f"'{'a.' * 128}a' exceeds the 255 character FQDN limit."
    assert shortened(message) == message


def test_a_long_message_of_short_words_is_bounded() -> None:
    assert len(shortened("ab " * 100_000)) < 2100


@pytest.mark.parametrize("data, deepest", [
    ({}, 1), ([], 1), (1, 0), ({"a": [1, {"b": "c"}]}, 3), ([[[[]]]], 4),
])
def test_depth_is_the_deepest_nesting_of_lists_and_objects(data: object, deepest: int) -> None:
    check_document(data, deepest)
    if deepest > 0:
        with pytest.raises(errors.HTTPBadRequest, match="nested deeper than"):
            check_document(data, deepest - 1)


def test_depth_of_a_very_deep_body_is_measured_without_recursion() -> None:
    data: list = []
    for _ in range(100_000):
        data = [data]
    with pytest.raises(errors.HTTPBadRequest, match="nested deeper than 32 levels"):
        check_document(data, 32)


@pytest.mark.parametrize("data", [
    "\x00", {"k\x00": 1}, {"a": ["b", {"c": "d\x00"}]}, [[["\x00"]]],
])
def test_nul_in_any_string_of_a_body_is_refused(data: object) -> None:
    with pytest.raises(errors.InvalidInput, match="NUL characters are not allowed"):
        check_document(data)


@pytest.mark.parametrize("data", [
    ["\x00", [[[]]]], [[[[]]], "\x00"], {"k\x00": [[[]]]}, [[["\x00", []]]],
])
def test_a_body_too_deep_and_holding_nul_is_refused_as_too_deep(data: object) -> None:
    with pytest.raises(errors.HTTPBadRequest, match="nested deeper than 3 levels"):
        check_document(data, 3)


def test_the_environ_of_an_rsgi_request() -> None:
    headers = {"content-type": "application/json", "content-length": "2",
               "x-auth-token": "t", "transfer-encoding": "chunked"}
    scope = SimpleNamespace(
        method="PUT", path="/v2.0/networks/a b%41", query_string="fields=id",
        server="127.0.0.1:9696", client="127.0.0.1:40000", http_version="1.1",
        scheme="http", headers=SimpleNamespace(items=lambda: list(headers.items())))
    environ = wsgi_environ(scope, b"{}")
    assert environ["PATH_INFO"] == "/v2.0/networks/a b%41"  # granian decoded it once
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("127.0.0.1", "9696")
    assert environ["CONTENT_TYPE"] == "application/json"
    assert environ["CONTENT_LENGTH"] == "2" and environ["wsgi.input"].read() == b"{}"
    assert environ["HTTP_X_AUTH_TOKEN"] == "t"
    assert "HTTP_TRANSFER_ENCODING" not in environ and "HTTP_CONTENT_LENGTH" not in environ


def test_a_path_beyond_latin1_reaches_the_app_as_its_utf8_bytes() -> None:
    """granian gives the path as decoded text; PEP 3333 wants its bytes."""
    scope = SimpleNamespace(
        method="GET", path="/v2.0/networks/\U000d176b\u00fd\x04", query_string="",
        server="127.0.0.1:9696", client="127.0.0.1:40000", http_version="1.1",
        scheme="http", headers=SimpleNamespace(items=lambda: []))
    path = wsgi_environ(scope, b"")["PATH_INFO"]
    assert path.encode("latin-1").decode("utf-8") == "/v2.0/networks/\U000d176b\u00fd\x04"


class FakeProto:
    """granian's RSGI protocol: the body's chunks, then the answer given."""

    def __init__(self, chunks: list[bytes], stall: bool = False) -> None:
        self.chunks = chunks
        self.stall = stall
        self.answer: tuple[int, dict[str, str], bytes] | None = None
        self.answered = threading.Event()
        self.answered_on: threading.Thread | None = None

    async def _iterate(self):  # type: ignore[no-untyped-def]
        for chunk in self.chunks:
            yield chunk
        if self.stall:
            await asyncio.sleep(3600)

    def __aiter__(self):  # type: ignore[no-untyped-def]
        return self._iterate()

    async def __call__(self) -> bytes:
        return b"".join([chunk async for chunk in self._iterate()])

    def response_bytes(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.answer = (status, dict(headers), body)
        self.answered_on = threading.current_thread()
        self.answered.set()


def _scope(headers: dict[str, str], method: str = "POST") -> SimpleNamespace:
    return SimpleNamespace(
        method=method, path="/v2.0/networks", query_string="", server="127.0.0.1:9696",
        client="127.0.0.1:40000", http_version="1.1", scheme="http",
        headers=SimpleNamespace(items=lambda: list(headers.items()), get=headers.get))


CHUNKED = {"transfer-encoding": "chunked"}


@contextlib.contextmanager
def _front(app: Any, max_body: int = 10, timeout: float = 5) -> Iterator[BodyFirst]:
    """A front whose event loop runs on a thread of its own, as a worker's."""
    front = BodyFirst(app, threads=1, max_body=max_body, read_timeout=timeout, max_line=100)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever)
    thread.start()
    front.open(loop)
    try:
        yield front
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        front.close()


def _answer(proto: FakeProto) -> tuple[int, Any]:
    assert proto.answered.wait(30)
    assert proto.answer is not None
    status, _, body = proto.answer
    return status, orjson.loads(body)["NeutronError"]["type"] if status >= 400 else body


def _serve(app: Any, scope: SimpleNamespace, proto: FakeProto, max_body: int = 10,
           timeout: float = 5) -> tuple[int, Any]:
    with _front(app, max_body, timeout) as front:
        front.start(scope, proto)
        return _answer(proto)


def _echo(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [])
    return [environ["wsgi.input"].read()]


def test_the_front_hands_the_app_the_whole_body() -> None:
    proto = FakeProto([b"01234", b"56789"])
    assert _serve(_echo, _scope(CHUNKED), proto) == (200, b"0123456789")


def test_the_front_hands_the_app_a_body_of_declared_length() -> None:
    proto = FakeProto([b"01234", b"56789"])
    assert _serve(_echo, _scope({"content-length": "10"}), proto) == (200, b"0123456789")


def test_the_front_refuses_a_declared_length_before_reading() -> None:
    proto = FakeProto([b"x" * 100])
    assert _serve(_echo, _scope({"content-length": "100"}), proto) == \
        (413, "HTTPRequestEntityTooLarge")


def test_the_front_refuses_a_chunked_body_past_the_limit() -> None:
    assert _serve(_echo, _scope(CHUNKED), FakeProto([b"x" * 6, b"x" * 6])) == \
        (413, "HTTPRequestEntityTooLarge")


def test_the_front_gives_up_on_a_stalled_body() -> None:
    proto = FakeProto([b"x"], stall=True)
    assert _serve(_echo, _scope(CHUNKED), proto, timeout=0.2) == (408, "HTTPRequestTimeout")


def test_the_front_gives_up_on_a_stalled_body_of_declared_length() -> None:
    proto = FakeProto([b"x"], stall=True)
    assert _serve(_echo, _scope({"content-length": "5"}), proto, timeout=0.2) == \
        (408, "HTTPRequestTimeout")


def test_the_front_answers_a_neutron_500_for_what_escapes_the_app() -> None:
    def broken(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        raise RuntimeError("a middleware failed")
    assert _serve(broken, _scope(CHUNKED), FakeProto([])) == (500, "HTTPInternalServerError")
    assert _serve(broken, _scope({}, "GET"), FakeProto([])) == (500, "HTTPInternalServerError")


def test_what_an_app_writes_is_sent_before_what_it_returns() -> None:
    def writer(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        write = start_response("200 OK", [])
        write(b"written ")
        write(b"first, ")
        return [b"returned ", b"after"]
    assert _serve(writer, _scope({}), FakeProto([])) == (200, b"written first, returned after")


def test_an_app_may_answer_with_write_alone() -> None:
    def writer(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [])(b"all of it")
        return []
    assert _serve(writer, _scope({}), FakeProto([])) == (200, b"all of it")



@pytest.mark.parametrize("headers", [{}, {"content-length": "0"}])
def test_a_request_without_a_body_is_answered_on_the_thread_that_starts_it(
        headers: dict[str, str]) -> None:
    """No trip through the event loop and back: none is opened here."""
    front = BodyFirst(_echo, threads=1, max_body=10, read_timeout=5, max_line=100)
    proto = FakeProto([b"never read"])
    try:
        front.start(_scope(headers, "GET"), proto)
    finally:
        front.close()
    assert proto.answered_on is threading.current_thread()
    assert proto.answer == (200, {}, b"")


def test_a_request_with_a_body_is_answered_on_a_thread_of_the_front() -> None:
    proto = FakeProto([b"{}"])
    _serve(_echo, _scope({"content-length": "2"}), proto)
    assert proto.answered_on is not None and proto.answered_on.name.startswith("api")
