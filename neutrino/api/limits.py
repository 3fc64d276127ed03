"""What a request may cost before the app looks at it: its body's size.

A body is read here, once, and never past the limit: a declared
``Content-Length`` over it is refused before a byte of the body is read, a
chunked one as soon as it grows past it. What is read is handed on in
memory, so the rest of the pipeline never waits on the client again. Upstream
runs oslo.middleware's ``sizelimit`` filter for this, with the same option;
its refusal here carries a Neutron error body like every other.
"""
from __future__ import annotations

import io
from typing import Any, Callable, Iterable

from neutrino.api.hooks.translation import neutron_error

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

TOO_LARGE = (413, "HTTPRequestEntityTooLarge", "Request is too large.")
TIMED_OUT = (408, "HTTPRequestTimeout", "The client did not send the request in time.")
BAD_LENGTH = (400, "HTTPBadRequest", "Content-Length is not a number of bytes.")
URI_TOO_LONG = (414, "HTTPRequestURITooLong", "The request URI is too long.")
HEADER_TOO_LONG = (431, "HTTPRequestHeaderFieldsTooLarge", "A request header is too long.")
# Worded as the app's own 500 (api/hooks/translation.py).
INTERNAL = (500, "HTTPInternalServerError",
            "Request Failed: internal server error while processing your request.")
_REASONS = {400: "Bad Request", 405: "Method Not Allowed", 408: "Request Timeout",
            413: "Request Entity Too Large", 414: "Request-URI Too Long",
            431: "Request Header Fields Too Large", 500: "Internal Server Error"}


class TooLarge(Exception):
    """The body is larger than ``max_request_body_size``."""


def refusal(code: int, kind: str, message: str) -> tuple[str, list[tuple[str, str]], bytes]:
    """Status line, headers and body of an answer given without the app."""
    body = neutron_error(None, code, kind, message)
    return (f"{code} {_REASONS.get(code, '')}".rstrip(),
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))], body)


def declared_length(environ: dict[str, Any]) -> int | None:
    """The body's ``Content-Length``; None when the client sends none."""
    raw = environ.get("CONTENT_LENGTH") or ""
    if not raw.strip():
        return None
    length = int(raw)  # ValueError: the caller's 400
    if length < 0:
        raise ValueError(raw)
    return length


def read_body(stream: Any, length: int | None, limit: int) -> bytes:
    """At most ``limit`` bytes of a body; ``TooLarge`` past that."""
    if length is not None and length > limit:
        raise TooLarge()
    wanted = limit + 1 if length is None else length
    parts: list[bytes] = []
    got = 0
    while got < wanted:
        chunk = stream.read(min(wanted - got, 65536))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    if got > limit:
        raise TooLarge()
    return b"".join(parts)


def _has_body(environ: dict[str, Any], length: int | None) -> bool:
    if length is not None:
        return length > 0
    return "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()


def with_body_limit(app: WSGIApp, limit: int) -> WSGIApp:
    """Refuse a body over ``limit`` bytes (413), read the rest into memory."""

    def limited(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        try:
            length = declared_length(environ)
        except ValueError:
            return _answer(start_response, *BAD_LENGTH)
        try:
            body = (read_body(environ["wsgi.input"], length, limit)
                    if _has_body(environ, length) else b"")
        except TooLarge:
            return _answer(start_response, *TOO_LARGE)
        except OSError:  # the socket's timeout (TimeoutError) or the client went away
            return _answer(start_response, *TIMED_OUT)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        return app(environ, start_response)
    return limited


def _answer(start_response: Callable[..., Any], code: int, kind: str,
            message: str) -> list[bytes]:
    status, headers, body = refusal(code, kind, message)
    start_response(status, headers)
    return [body]
