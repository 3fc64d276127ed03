"""Clients that send part of a request and then nothing cost a connection,
not one of the threads that answer everyone else: under ``neutrino serve``'s
front and under the all-in-one's threaded server."""
from __future__ import annotations

import contextlib
import socket
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson
import pytest
import requests

from neutrino.aio.wsgi import ThreadedWsgi
from neutrino.api.limits import with_body_limit
from tests.conftest import Server, free_port

STALLED = 200
# A normal request is answered within this, however many clients stall.
GENEROUS = 10.0
STALLED_BODY = (b"POST /v2.0/networks HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                b'{"network"')


@contextlib.contextmanager
def stalled(port: int, count: int, data: bytes) -> Iterator[list[socket.socket]]:
    """``count`` connections that each sent ``data`` and then nothing."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            sock.sendall(data)
            socks.append(sock)
        yield socks
    finally:
        for sock in socks:
            sock.close()


def answered_in_time(url: str) -> requests.Response:
    started = time.monotonic()
    resp = requests.get(url, timeout=GENEROUS)
    assert time.monotonic() - started < GENEROUS
    return resp


def read_answer(sock: socket.socket) -> bytes:
    answer = b""
    with contextlib.suppress(OSError):
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
            if b"}}" in answer:
                break
    return answer


def neutron_error_of(answer: bytes) -> dict[str, Any]:
    body = orjson.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert set(body) == {"NeutronError"}, body
    return body["NeutronError"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("stalls"), extra="request_read_timeout = 3\n").start()
    yield srv
    srv.stop()


def test_stalled_bodies_leave_requests_answered(server: Server) -> None:
    with stalled(server.port, STALLED, STALLED_BODY):
        for _ in range(3):
            assert answered_in_time(server.url + "/v2.0/networks").status_code == 200


def test_stalled_headers_leave_requests_answered(server: Server) -> None:
    with stalled(server.port, STALLED, b"GET /v2.0/networks HTTP/1.1\r\nHost: x\r\n"):
        assert answered_in_time(server.url + "/v2.0/networks").status_code == 200


def test_a_stalled_body_is_answered_408_after_the_read_timeout(server: Server) -> None:
    with stalled(server.port, 1, STALLED_BODY) as (sock,):
        started = time.monotonic()
        answer = read_answer(sock)
    assert 2 < time.monotonic() - started < GENEROUS
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert neutron_error_of(answer)["type"] == "HTTPRequestTimeout"


def test_stalled_headers_are_answered_408_after_the_read_timeout(server: Server) -> None:
    with stalled(server.port, 1, b"GET /v2.0/networks HTTP/1.1\r\nHost: x\r\n") as (sock,):
        started = time.monotonic()
        answer = read_answer(sock)
    assert 2 < time.monotonic() - started < GENEROUS
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert neutron_error_of(answer)["type"] == "HTTPRequestTimeout"


# -- the all-in-one's threaded server -------------------------------------------

def _echo_length(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [str(len(body)).encode()]


@pytest.fixture
def threaded() -> Iterator[ThreadedWsgi]:
    http = ThreadedWsgi(with_body_limit(_echo_length, 114688), "127.0.0.1", free_port(),
                        read_timeout=2).start()
    yield http
    http.stop()


def test_aio_stalled_bodies_leave_requests_answered(threaded: ThreadedWsgi) -> None:
    port = threaded.server.server_address[1]
    with stalled(port, STALLED, STALLED_BODY):
        resp = answered_in_time(f"http://127.0.0.1:{port}/")
    assert resp.text == "0"


def test_aio_stalled_body_is_answered_408_after_the_read_timeout(threaded: ThreadedWsgi) -> None:
    port = threaded.server.server_address[1]
    with stalled(port, 1, STALLED_BODY) as (sock,):
        started = time.monotonic()
        answer = read_answer(sock)
    assert 1 < time.monotonic() - started < GENEROUS
    assert answer.split(b" ", 2)[1] == b"408", answer
    assert neutron_error_of(answer)["type"] == "HTTPRequestTimeout"


def test_aio_stalled_headers_lose_the_connection(threaded: ThreadedWsgi, tmp_path: Path) -> None:
    port = threaded.server.server_address[1]
    with stalled(port, 1, b"GET / HTTP/1.1\r\nHost: x\r\n") as (sock,):
        started = time.monotonic()
        read_answer(sock)
    assert time.monotonic() - started < GENEROUS
