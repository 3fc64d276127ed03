"""HTTP/1.1 requests read from a connection's bytes, within the API's limits,
and the bytes of an answer.

llhttp (Node.js's parser, through httptools) does the parsing in C; this
module adds what the API promises on top of it: a request line over
``max_header_line`` is a 414, a header line over it or more headers than
``MAX_HEADERS`` a 431, a declared body over ``max_request_body_size`` a 413
before any of it is read, a chunked one a 413 as soon as it grows past it,
and anything llhttp cannot parse a 400. Each refusal is a Neutron error
(``api/limits.py``), and the connection ends after it: the bytes that
follow a refused request cannot be told apart from the next one.
"""
from __future__ import annotations

import time
from collections import deque
from email.utils import formatdate

import httptools

from neutrino.api.limits import (
    BAD_LENGTH,
    HEADER_TOO_LONG,
    TOO_LARGE,
    URI_TOO_LONG,
    refusal,
)

# What hyper, the previous front's parser, allowed; upstream's eventlet
# (the standard library's http.client) allows as many.
MAX_HEADERS = 100
TOO_MANY_HEADERS = (431, "HTTPRequestHeaderFieldsTooLarge",
                    f"The request has more than {MAX_HEADERS} headers.")
HEAD_TOO_LARGE = (431, "HTTPRequestHeaderFieldsTooLarge", "The request's headers are too large.")
Refusal = tuple[int, str, str]


class Request:
    """One complete request: its head as sent and its whole body."""

    __slots__ = ("method", "target", "version", "headers", "body", "keep_alive")

    def __init__(self, method: str, target: bytes, version: str,
                 headers: list[tuple[bytes, bytes]], body: bytes, keep_alive: bool) -> None:
        self.method, self.target, self.version = method, target, version
        self.headers, self.body, self.keep_alive = headers, body, keep_alive


class _Stop(Exception):
    """Raised from a parser callback to stop parsing at a refusal."""


class Reader:
    """The requests of one connection, fed its bytes as they come.

    ``done`` holds the requests complete so far, in order (pipelined ones
    included); ``refused`` the reason the connection can read no more;
    ``began`` when the part being read now (a head, then a body) started,
    or None between requests, for ``request_read_timeout``."""

    def __init__(self, max_line: int, max_body: int) -> None:
        self.max_line, self.max_body = max_line, max_body
        # Room for a request line and MAX_HEADERS lines, each as long as
        # allowed: a head longer than that must have a line over the limit,
        # which is refused here before its end comes.
        self.max_head = (MAX_HEADERS + 1) * (max_line + 2) + 2
        self.done: deque[Request] = deque()
        self.refused: Refusal | None = None
        self.upgraded = False  # the client asked to switch protocols: nothing follows
        self.began: float | None = None
        self.continue_due = False  # "Expect: 100-continue", not answered yet
        self._parser = httptools.HttpRequestParser(self)
        self._in_head = True
        self._head_bytes = 0
        self._reset()

    def _reset(self) -> None:
        self._target = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._body_bytes = 0
        self._keep_alive = True

    @property
    def reading(self) -> bool:
        """Whether part of a request has come and the rest has not."""
        return self.began is not None

    @property
    def in_body(self) -> bool:
        return not self._in_head

    def feed(self, data: bytes) -> None:
        if self.refused is not None or self.upgraded:
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.upgraded = True
        except _Stop:
            pass
        except httptools.HttpParserCallbackError as exc:
            if not isinstance(exc.__context__, _Stop):
                raise
        except httptools.HttpParserError as exc:
            self.refused = self.refused or _malformed(str(exc))
            return
        if self.refused is None and self._in_head and self.began is not None:
            # Counted after parsing: at most one read's bytes of the
            # requests before this head are counted too.
            self._head_bytes += len(data)
            if self._head_bytes > self.max_head:
                self._refuse(HEAD_TOO_LARGE, stop=False)

    def close(self) -> None:
        """Let go of the parser, which holds this reader for its callbacks:
        a closed connection's memory then goes at once, not at a cyclic
        collection of the generation it has grown old in (rare in a
        worker: ``serve.tune_gc``), which a worker's memory carried for
        every connection closed since (issue 37)."""
        self._parser = None  # type: ignore[assignment]

    def _refuse(self, why: Refusal, stop: bool = True) -> None:
        self.refused = why
        if stop:
            raise _Stop()

    # -- llhttp's callbacks (httptools calls them by these names) -------------

    def on_message_begin(self) -> None:
        self.began = time.monotonic()
        self._in_head = True
        self._head_bytes = 0

    def on_url(self, part: bytes) -> None:
        self._target += part
        if len(self._target) > self.max_line:
            self._refuse(URI_TOO_LONG)

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(name) + len(value) + 2 > self.max_line:
            self._refuse(HEADER_TOO_LONG)
        if len(self._headers) >= MAX_HEADERS:
            self._refuse(TOO_MANY_HEADERS)
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        self._keep_alive = self._parser.should_keep_alive()
        declared = None
        expect = False
        chunked = False
        for name, value in self._headers:
            # By length first: most headers are none of these three.
            size = len(name)
            if size == 14 and name.lower() == b"content-length":
                declared = int(value)  # llhttp has checked it is digits
            elif size == 6 and name.lower() == b"expect":
                expect = value.lower() == b"100-continue"
            elif size == 17 and name.lower() == b"transfer-encoding":
                chunked = True
        if declared is not None and declared > self.max_body:
            self._refuse(TOO_LARGE)
        self.continue_due = expect and (bool(declared) or chunked)
        self._in_head = False
        self.began = time.monotonic()  # the body has its own time

    def on_body(self, part: bytes) -> None:
        self._body_bytes += len(part)
        if self._body_bytes > self.max_body:
            self._refuse(TOO_LARGE)
        self._body.append(part)

    def on_message_complete(self) -> None:
        parser = self._parser
        self.done.append(Request(
            parser.get_method().decode("latin-1"), self._target, parser.get_http_version(),
            self._headers, b"".join(self._body), self._keep_alive))
        self._reset()
        self._in_head = True
        self.began = None
        self.continue_due = False


def _malformed(reason: str) -> Refusal:
    if "Content-Length" in reason:
        return BAD_LENGTH
    return (400, "HTTPBadRequest", f"The request is not valid HTTP/1.1: {reason}.")


CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_BODILESS = ("1", "204", "304")
_date: tuple[int, bytes] = (0, b"")


def _date_line() -> bytes:
    """RFC 9110's Date, formatted once a second."""
    global _date
    now = int(time.time())
    if _date[0] != now:
        _date = (now, b"Date: " + formatdate(now, usegmt=True).encode() + b"\r\n")
    return _date[1]


def answer_bytes(status: str, headers: list[tuple[str, str]], body: bytes,
                 keep_alive: bool, http10: bool = False, head: bool = False) -> bytes:
    """The bytes of an answer: its body always framed by a Content-Length,
    ``Connection: close`` when the connection ends after it."""
    lines = ["HTTP/1.1 ", status, "\r\n"]
    has_length = False
    for name, value in headers:
        if len(name) == 14 and name.lower() == "content-length":
            has_length = True
        lines += (name, ": ", value, "\r\n")
    if not has_length and not status.startswith(_BODILESS):
        lines += ("Content-Length: ", str(len(body)), "\r\n")
    if not keep_alive:
        lines.append("Connection: close\r\n")
    elif http10:
        lines.append("Connection: keep-alive\r\n")
    out = "".join(lines).encode("latin-1") + _date_line() + b"\r\n"
    return out if head else out + body


def refusal_bytes(why: Refusal) -> bytes:
    """A refusal's answer, after which the connection ends."""
    status, headers, body = refusal(*why)
    return answer_bytes(status, headers, body, keep_alive=False)
