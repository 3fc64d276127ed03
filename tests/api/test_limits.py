"""What a request may cost before the app reads it: its body's size, its
request line and header lines; each refusal a Neutron error."""
from __future__ import annotations

import json
import re
import socket
from typing import Iterator

import pytest
import requests

from tests.api import _helpers as h
from tests.conftest import Server

MAX_BODY = 114688  # [oslo_middleware] max_request_body_size, upstream's default


def _neutron_error(resp: requests.Response, status: int, kind: str) -> str:
    return h.error((resp.status_code, resp.json()), status, kind)


def test_a_body_over_the_limit_is_413(server: Server) -> None:
    body = json.dumps({"network": {"name": "x" * (MAX_BODY + 1)}})
    resp = requests.post(server.url + "/v2.0/networks", data=body, timeout=30,
                         headers={"Content-Type": "application/json"})
    _neutron_error(resp, 413, "HTTPRequestEntityTooLarge")


def test_a_chunked_body_over_the_limit_is_413(server: Server) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"network": {"name": "'
        for _ in range(MAX_BODY // 1024 + 2):
            yield b"x" * 1024
        yield b'"}}'
    resp = requests.post(server.url + "/v2.0/networks", data=chunks(), timeout=30,
                         headers={"Content-Type": "application/json"})
    _neutron_error(resp, 413, "HTTPRequestEntityTooLarge")


def test_a_body_under_the_limit_is_read(admin) -> None:
    # Just under the limit: the body reaches validation (name too long).
    name = "x" * (MAX_BODY - 100)
    h.error(admin.post("/v2.0/networks", {"network": {"name": name}}), 400, "HTTPBadRequest")


def test_a_chunked_body_under_the_limit_is_read(server: Server) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"network": {"name": '
        yield json.dumps(h.unique("chunked")).encode() + b"}}"
    resp = requests.post(server.url + "/v2.0/networks", data=chunks(), timeout=30,
                         headers={"Content-Type": "application/json"})
    assert resp.status_code == 201, resp.text


def test_a_declared_huge_body_is_refused_before_it_is_sent(server: Server) -> None:
    """The 413 comes from the declared length alone: the client has sent
    a few bytes of a 50 MB body and waits."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"POST /v2.0/networks HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\n"
                     b"Content-Length: 52428800\r\n\r\n{\"network\": ")
        answer = b""
        while b"}}" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert b'"type":"HTTPRequestEntityTooLarge"' in answer, answer


def test_a_request_uri_over_max_header_line_is_414(server: Server) -> None:
    resp = requests.get(server.url + "/v2.0/networks?name=" + "n" * 20_000, timeout=10)
    _neutron_error(resp, 414, "HTTPRequestURITooLong")


def test_a_header_over_max_header_line_is_431(server: Server) -> None:
    resp = requests.get(server.url + "/v2.0/networks", timeout=10,
                        headers={"X-Padding": "p" * 20_000})
    _neutron_error(resp, 431, "HTTPRequestHeaderFieldsTooLarge")


def _raw(server: Server, head: bytes) -> bytes:
    """What the server answers to ``head``, sent as is on a new connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head)
        answer = b""
        while not answer.endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


GET = b"GET /v2.0/networks HTTP/1.1\r\nHost: x\r\nX-Project-Id: p\r\nX-Roles: admin\r\n"


def test_headers_within_max_header_line_are_served_however_many_bytes_in_all(
        server: Server) -> None:
    """60 headers of 15,000 bytes: each within ``max_header_line``, their
    sum over what granian buffers for a head by default (400 KB)."""
    padding = b"".join(b"X-Padding-%d: %s\r\n" % (i, b"p" * 15_000) for i in range(60))
    answer = _raw(server, GET + padding + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


def test_a_header_longer_than_granians_default_buffer_is_a_neutron_431(
        server: Server) -> None:
    answer = _raw(server, GET + b"X-Padding: " + b"p" * 1_000_000 + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    assert b'"type":"HTTPRequestHeaderFieldsTooLarge"' in answer, answer[:400]


@pytest.mark.parametrize("head, status, kind", [
    (GET + b"".join(b"X-H%d: v\r\n" % i for i in range(101)) + b"\r\n", b"431",
     b"HTTPRequestHeaderFieldsTooLarge"),
    (b"GET /v2.0/networks?name=" + b"n" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", b"414",
     b"HTTPRequestURITooLong"),
    (b"GET /v2.0/networks HTTP/1.1 x\r\nHost: x\r\n\r\n", b"400", b"HTTPBadRequest"),
    (b"GET /v2.0/networks\x00 HTTP/1.1\r\nHost: x\r\n\r\n", b"400", b"HTTPBadRequest"),
    (b"POST /v2.0/networks HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n", b"400",
     b"HTTPBadRequest"),
    (b"POST /v2.0/networks HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n{}", b"400", b"HTTPBadRequest"),
    (GET + b"X-Padding: " + b"p" * 2_000_000, b"431", b"HTTPRequestHeaderFieldsTooLarge"),
], ids=["101 headers", "a 70 KB target", "a bad request line", "a NUL in the target",
        "a bad Content-Length", "both a length and chunks", "a head that never ends"])
def test_what_cannot_be_parsed_or_is_too_large_is_a_neutron_error(
        server: Server, head: bytes, status: bytes, kind: bytes) -> None:
    """What the HTTP layer refuses itself carries a Neutron error body too,
    and the connection ends after it."""
    answer = _raw(server, head)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]
    assert b'"type":"' + kind + b'"' in answer, answer[:400]
    assert b"Connection: close" in answer, answer[:400]


def test_pipelined_requests_are_answered_in_order_on_one_connection(server: Server) -> None:
    body = json.dumps({"network": {"name": h.unique("piped")}}).encode()
    head = (b"POST /v2.0/networks HTTP/1.1\r\nHost: x\r\nX-Project-Id: p\r\nX-Roles: admin\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(GET + b"\r\n" + head + body + b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = b""
        while answer.count(b"HTTP/1.1 ") < 3 or not answer.endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, answer
            answer += chunk
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)
    assert statuses == [b"200", b"201", b"404"], answer


def test_a_client_that_expects_100_continue_gets_it_then_the_answer(server: Server) -> None:
    body = json.dumps({"network": {"name": h.unique("continue")}}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"POST /v2.0/networks HTTP/1.1\r\nHost: x\r\nX-Project-Id: p\r\nX-Roles: admin\r\n"
                     b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body))
        assert sock.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        answer = b""
        while not answer.endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, answer
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 201"), answer
