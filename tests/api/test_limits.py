"""What a request may cost before the app reads it: its body's size, its
request line and header lines; each refusal a Neutron error."""
from __future__ import annotations

import json
import socket
from typing import Iterator

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
