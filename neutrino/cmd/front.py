"""The API's front in a granian worker: a request has its whole body before
it gets a thread.

Under granian's WSGI interface a request is handed to one of the worker's
threads as soon as its headers are in, and that thread then waits on the
client for the body: a few clients that send headers and part of a body,
then nothing, held every thread and the API answered no one. Here granian
serves the worker's event loop (its RSGI interface): the body is read there,
bounded in size (``max_request_body_size``, refused with 413 without reading
it) and in time (``request_read_timeout``, 408), and only a complete request
runs the WSGI app on the worker's threads. A stalled client costs a
connection and a coroutine, not a thread.
"""
from __future__ import annotations

import asyncio
import io
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable

from neutrino.api.limits import (
    BAD_LENGTH,
    HEADER_TOO_LONG,
    INTERNAL,
    TIMED_OUT,
    TOO_LARGE,
    URI_TOO_LONG,
    TooLarge,
    refusal,
)

LOG = logging.getLogger("neutrino.api")
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Answer = tuple[int, list[tuple[str, str]], bytes]


class BodyFirst:
    """An RSGI application running a WSGI one on a pool of threads."""

    def __init__(self, app: WSGIApp, threads: int, max_body: int,
                 read_timeout: float, max_line: int) -> None:
        self.app = app
        self.max_body = max_body
        self.max_line = max_line
        self.read_timeout = read_timeout
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="api")

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Called by granian once the worker's loop exists."""

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        """granian has finished the requests in flight: nothing is left to
        wait for, and a pool thread held by a library (a cast reconnecting
        to a bus that is gone) must not keep the worker from exiting."""
        self.pool.shutdown(wait=False, cancel_futures=True)

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        too_long = self._too_long(scope)
        if too_long is not None:
            return _respond(proto, _refused(*too_long))
        try:
            body = await asyncio.wait_for(self._body(scope, proto), self.read_timeout)
        except TooLarge:
            return _respond(proto, _refused(*TOO_LARGE))
        except ValueError:
            return _respond(proto, _refused(*BAD_LENGTH))
        except (asyncio.TimeoutError, RuntimeError):  # RuntimeError: the client went away
            return _respond(proto, _refused(*TIMED_OUT))
        environ = wsgi_environ(scope, body)
        try:
            answer = await asyncio.get_running_loop().run_in_executor(
                self.pool, self._call, environ)
        except Exception:
            # What escaped the app (a WSGI middleware's failure): granian
            # would answer an empty 500.
            LOG.exception("unexpected error on %s %s", scope.method, scope.path)
            answer = _refused(*INTERNAL)
        _respond(proto, answer)

    def _too_long(self, scope: Any) -> tuple[int, str, str] | None:
        """Upstream's ``max_header_line``, answered here with a Neutron error:
        granian refuses only far longer lines, with an empty body."""
        if len(scope.path) + len(scope.query_string) + 1 > self.max_line:
            return URI_TOO_LONG
        if any(len(name) + len(value) + 2 > self.max_line
               for name, value in scope.headers.items()):
            return HEADER_TOO_LONG
        return None

    async def _body(self, scope: Any, proto: Any) -> bytes:
        declared = scope.headers.get("content-length")
        if declared is not None:
            length = int(declared)
            if length < 0:
                raise ValueError(declared)
            if length > self.max_body:
                raise TooLarge()
            if length == 0:
                return b""
        parts: list[bytes] = []
        got = 0
        async for chunk in proto:
            got += len(chunk)
            if got > self.max_body:
                raise TooLarge()
            parts.append(chunk)
        return b"".join(parts)

    def _call(self, environ: dict[str, Any]) -> Answer:
        started: list[Any] = []
        # PEP 3333's write() and the iterable's chunks, in the order the app
        # produced them: what was written before the iterable came first.
        out: list[bytes] = []

        def start_response(status: str, headers: list[tuple[str, str]],
                           exc_info: Any = None) -> Callable[[bytes], None]:
            started[:] = [status, headers]
            return out.append
        result = self.app(environ, start_response)
        try:
            for chunk in result:  # one by one: the iterable may write() too
                out.append(chunk)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        status, headers = started
        return int(status.split(" ", 1)[0]), list(headers), b"".join(out)


def _refused(code: int, kind: str, message: str) -> Answer:
    _, headers, body = refusal(code, kind, message)
    return code, headers, body


def _respond(proto: Any, answer: Answer) -> None:
    code, headers, body = answer
    try:
        proto.response_bytes(code, headers, body)
    except RuntimeError:  # the client is gone: nobody to answer
        pass


def wsgi_environ(scope: Any, body: bytes) -> dict[str, Any]:
    """PEP 3333's environ for an RSGI request whose body has been read."""
    host, _, port = scope.server.rpartition(":")
    client, _, client_port = scope.client.rpartition(":")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope.method,
        "SCRIPT_NAME": "",
        # granian's RSGI path is already percent-decoded, as UTF-8 text;
        # PEP 3333 wants the decoded bytes as latin-1 text (decoding again
        # would turn "%2541" into "A", and a character above U+00FF would
        # make Falcon's re-encoding fail).
        "PATH_INFO": scope.path.encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope.query_string,
        "SERVER_NAME": host,
        "SERVER_PORT": port,
        "SERVER_PROTOCOL": f"HTTP/{scope.http_version}",
        "REMOTE_ADDR": client,
        "REMOTE_PORT": client_port,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.scheme,
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.input_terminated": True,
    }
    for name, value in scope.headers.items():
        key = name.upper().replace("-", "_")
        if key in ("CONTENT_LENGTH", "TRANSFER_ENCODING"):
            continue
        if key != "CONTENT_TYPE":
            key = "HTTP_" + key
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ
