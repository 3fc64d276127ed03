"""The API's HTTP/1.1 front (``cmd/front.py``, ``cmd/http1.py``) serving a
small WSGI app in this process, over a real socket."""
from __future__ import annotations

import contextlib
import gc
import re
import socket
import threading
import time
from typing import Any, Iterator

import orjson
import pytest

from neutrino.cmd.front import Front, wsgi_environ
from neutrino.cmd.http1 import Request


def _echo(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("X-Thread", threading.current_thread().name),
                              ("X-Path", environ["PATH_INFO"].encode("latin-1").hex())])
    return [body]


@contextlib.contextmanager
def serving(app: Any = _echo, max_body: int = 10, timeout: float = 5.0,
            stop: list[bool] | None = None) -> Iterator[tuple[Front, int]]:
    """A front on a port of its own, its main loop on a thread."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    front = Front(app, threads=2, max_body=max_body, read_timeout=timeout, max_line=100)
    stop = stop if stop is not None else []
    thread = threading.Thread(target=front.serve, args=(listener, lambda: bool(stop)))
    thread.start()
    try:
        yield front, listener.getsockname()[1]
    finally:
        stop.append(True)
        thread.join(30)
        assert not thread.is_alive()


def _exchange(port: int, data: bytes, answers: int = 1, pause: float = 0) -> bytes:
    """Send ``data``; what comes back until ``answers`` complete answers or the end."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        if pause:
            time.sleep(pause)
        got = b""
        while _complete(got) < answers:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    return got


def _complete(got: bytes) -> int:
    count, rest = 0, got
    while True:
        head, sep, rest = rest.partition(b"\r\n\r\n")
        if not sep:
            return count
        length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
        if len(rest) < length:
            return count
        rest = rest[length:]
        count += 1


def _statuses(got: bytes) -> list[int]:
    return [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", got)]


def _error(got: bytes) -> str:
    return orjson.loads(got.split(b"\r\n\r\n", 1)[1])["NeutronError"]["type"]


POST = b"POST /v2.0/networks HTTP/1.1\r\nHost: x\r\n"


def test_the_environ_of_a_request() -> None:
    request = Request("PUT", b"/v2.0/networks/a%20b%2541?fields=id", "1.1",
                      [(b"Content-Type", b"application/json"), (b"X-Auth-Token", b"t"),
                       (b"Transfer-Encoding", b"chunked"), (b"Content-Length", b"2"),
                       (b"X-Roles", b"a"), (b"x-roles", b"b")], b"{}", True)
    environ = wsgi_environ(request, ("127.0.0.1", "9696"), ("127.0.0.1", "40000"))
    assert environ["PATH_INFO"] == "/v2.0/networks/a b%41"  # decoded once
    assert environ["QUERY_STRING"] == "fields=id"
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("127.0.0.1", "9696")
    assert environ["CONTENT_TYPE"] == "application/json"
    assert environ["CONTENT_LENGTH"] == "2" and environ["wsgi.input"].read() == b"{}"
    assert environ["HTTP_X_AUTH_TOKEN"] == "t" and environ["HTTP_X_ROLES"] == "a,b"
    assert "HTTP_TRANSFER_ENCODING" not in environ and "HTTP_CONTENT_LENGTH" not in environ


def test_a_path_beyond_latin1_reaches_the_app_as_its_utf8_bytes() -> None:
    text = "/v2.0/networks/\U000d176b\u00fd\x04"
    target = "".join(c if c.isascii() and c.isprintable() else
                     "".join(f"%{b:02X}" for b in c.encode()) for c in text).encode()
    request = Request("GET", target, "1.1", [], b"", True)
    path = wsgi_environ(request, ("h", "1"), ("c", "2"))["PATH_INFO"]
    assert path.encode("latin-1").decode("utf-8") == text


def test_a_body_of_declared_length_reaches_the_app_whole() -> None:
    with serving() as (_, port):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(POST + b"Content-Length: 10\r\n\r\n01234")
            time.sleep(0.1)
            sock.sendall(b"56789")
            got = sock.recv(65536)
    assert _statuses(got) == [200] and got.endswith(b"\r\n\r\n0123456789"), got


def test_a_chunked_body_reaches_the_app_decoded() -> None:
    with serving() as (_, port):
        got = _exchange(port, POST + b"Transfer-Encoding: chunked\r\n\r\n"
                        b"5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n")
    assert got.endswith(b"\r\n\r\n0123456789"), got


def test_a_declared_length_over_the_limit_is_refused_before_the_body() -> None:
    with serving() as (_, port):
        got = _exchange(port, POST + b"Content-Length: 100\r\n\r\n")
    assert _statuses(got) == [413] and _error(got) == "HTTPRequestEntityTooLarge"
    assert b"Connection: close" in got


def test_a_chunked_body_past_the_limit_is_refused() -> None:
    with serving() as (_, port):
        got = _exchange(port, POST + b"Transfer-Encoding: chunked\r\n\r\n"
                        b"6\r\nxxxxxx\r\n6\r\nxxxxxx\r\n")
    assert _statuses(got) == [413] and _error(got) == "HTTPRequestEntityTooLarge"


@pytest.mark.parametrize("data", [
    POST + b"Content-Length: 5\r\n\r\nx",
    POST + b"Transfer-Encoding: chunked\r\n\r\n1\r\nx\r\n",
    b"GET /v2.0/networks HTTP/1.1\r\nHost: x\r\n",
], ids=["a body of declared length", "a chunked body", "a head"])
def test_what_stalls_is_answered_408_after_the_read_timeout(data: bytes) -> None:
    with serving(timeout=0.5) as (_, port):
        started = time.monotonic()
        got = _exchange(port, data)
    assert 0.4 < time.monotonic() - started < 5
    assert _statuses(got) == [408] and _error(got) == "HTTPRequestTimeout"


def test_a_stalled_client_holds_no_thread() -> None:
    """Both threads' worth of stalled clients, and a request still answered at once."""
    with serving() as (_, port):
        stalled = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
        try:
            for sock in stalled:
                sock.sendall(POST + b"Content-Length: 5\r\n\r\nx")
            started = time.monotonic()
            got = _exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert time.monotonic() - started < 2 and _statuses(got) == [200]
        finally:
            for sock in stalled:
                sock.close()


def test_pipelined_requests_are_answered_in_order_and_the_connection_kept() -> None:
    with serving() as (_, port):
        got = _exchange(port, POST + b"Content-Length: 3\r\n\r\nonePOST /a HTTP/1.1\r\n"
                        b"Content-Length: 3\r\n\r\ntwoGET /b HTTP/1.1\r\n\r\n", answers=3)
    assert _statuses(got) == [200, 200, 200]
    assert [part[-3:] for part in got.split(b"HTTP/1.1 ")[1:3]] == [b"one", b"two"]
    assert b"Connection: close" not in got


def test_an_http10_request_ends_its_connection() -> None:
    with serving() as (_, port):
        got = _exchange(port, b"GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n", answers=2)
    assert _statuses(got) == [200] and b"Connection: close" in got


def test_a_request_is_answered_on_the_thread_that_read_it() -> None:
    with serving() as (_, port):
        got = _exchange(port, POST + b"Content-Length: 2\r\n\r\n{}")
    assert b"X-Thread: api-" in got


def test_a_large_answer_reaches_a_slow_reader() -> None:
    big = bytes(range(256)) * 20_000  # 5 MB: more than a socket's buffer takes at once

    def large(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [])
        return [big]
    with serving(large) as (_, port):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(0.5)
            got = b""
            while _complete(got) < 2:
                got += sock.recv(65536)
    assert _statuses(got) == [200, 200] and got.count(big) == 2


def test_an_app_failure_is_a_neutron_500() -> None:
    def broken(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        raise RuntimeError("a middleware failed")
    with serving(broken) as (_, port):
        got = _exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _statuses(got) == [500] and _error(got) == "HTTPInternalServerError"


def test_what_an_app_writes_is_sent_before_what_it_returns() -> None:
    def writer(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        write = start_response("200 OK", [])
        write(b"written ")
        write(b"first, ")
        return [b"returned ", b"after"]
    with serving(writer) as (_, port):
        got = _exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert got.endswith(b"\r\n\r\nwritten first, returned after")


def test_a_head_request_gets_no_body() -> None:
    with serving() as (_, port):
        got = _exchange(port, b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\n\r\n",
                        answers=2)
    assert _statuses(got) == [200, 200]


def test_a_stop_lets_the_request_in_flight_finish() -> None:
    entered = threading.Event()
    stop: list[bool] = []

    def slow(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        entered.set()
        time.sleep(0.5)
        start_response("200 OK", [])
        return [b"done"]
    with serving(slow, stop=stop) as (front, port):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert entered.wait(5)
            stop.append(True)
            got = sock.recv(65536)
    assert _statuses(got) == [200] and got.endswith(b"done") and b"Connection: close" in got
    assert not front.conns


def _sized(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [])
    return [b"x" * int(environ["PATH_INFO"].strip("/"))]


def test_the_heap_is_trimmed_after_large_answers_and_not_after_small_ones() -> None:
    """A worker gives back what large answers (a long list) freed
    (``cmd/heap.py``); small answers, most of them, cost no trim."""
    from neutrino.cmd import heap
    with serving(_sized) as (front, port):
        for _ in range(20):
            _exchange(port, b"GET /1000 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        time.sleep(0.6)  # two sweeps
        assert front.heap.trims == 0
        large = heap.LARGE * 2
        for _ in range(heap.TRIM_AFTER // large + 1):
            _exchange(port, f"GET /{large} HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
                      .encode())
        deadline = time.monotonic() + 5
        while front.heap.trims == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert front.heap.trims == 1


def test_a_closed_connection_leaves_nothing_for_the_cyclic_collector() -> None:
    """A worker runs the cyclic collector seldom (``serve.tune_gc``): what
    a connection held must go when it closes, not wait for a collection
    (issue 37 caps a worker's memory after a bench of many connections)."""
    from neutrino.cmd.http1 import Reader
    with serving() as (front, port):
        gc.collect()
        gc.disable()
        try:
            for _ in range(5):
                _exchange(port, b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            deadline = time.monotonic() + 5
            while front.conns and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not front.conns
            gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds stays in gc.garbage
            gc.collect()
            assert [o for o in gc.garbage if isinstance(o, Reader)] == []
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
