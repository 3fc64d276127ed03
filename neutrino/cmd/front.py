"""The API's front in a granian worker: a request has its whole body before
it gets a thread.

Under granian's WSGI interface a request is handed to one of the worker's
threads as soon as its headers are in, and that thread then waits on the
client for the body: a few clients that send headers and part of a body,
then nothing, held every thread and the API answered no one. Here a request
with a body is handed to the worker's event loop instead: the body is read
there, bounded in size (``max_request_body_size``, refused with 413 without
reading it) and in time (``request_read_timeout``, 408), and only a
complete request runs the WSGI app on a thread. A stalled client costs a
connection and a coroutine, not a thread.

A request without a body (every GET and DELETE) has nothing to wait for: it
runs on the granian thread that starts it (``cmd/worker.py``), as under
granian's WSGI interface. Each trip through the event loop to a thread and
back woke two more threads; on a shown port they were a third of its time
(docs/performance.md, "The request limits' cost").
"""
from __future__ import annotations

import asyncio
import io
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Awaitable, Callable, Iterable

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
    """A WSGI app behind granian's RSGI protocol objects: ``start`` takes
    each request's scope and protocol, and an answer is given through the
    protocol, from whichever thread has it."""

    def __init__(self, app: WSGIApp, threads: int, max_body: int,
                 read_timeout: float, max_line: int) -> None:
        self.app = app
        self.threads = threads
        self.max_body = max_body
        self.max_line = max_line
        self.read_timeout = read_timeout
        # Requests with a body, once it is read; granian's own ``threads``
        # run those without one.
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="api")
        self.loop: asyncio.AbstractEventLoop | None = None
        self._reading: set[asyncio.Task[None]] = set()

    def open(self, loop: asyncio.AbstractEventLoop) -> None:
        """The worker's event loop, where bodies are read."""
        self.loop = loop

    def close(self) -> None:
        """granian has finished the requests in flight: nothing is left to
        wait for, and a pool thread held by a library (a cast reconnecting
        to a bus that is gone) must not keep the worker from exiting."""
        self.pool.shutdown(wait=False, cancel_futures=True)

    def start(self, scope: Any, proto: Any) -> None:
        """A request whose headers are in, on a granian thread: refused at
        once, answered on this thread when it has no body, or handed to the
        event loop to read its body. Never raises: nothing would see it."""
        try:
            refused, reading = self._too_long(scope), None
            if refused is None:
                reading, refused = self._reading_of(scope.headers, proto)
            if refused is not None:
                _respond(proto, _refused(*refused))
            elif reading is None:
                self._run(scope, proto, b"")
            else:
                assert self.loop is not None, "the worker opens the front before it serves"
                self.loop.call_soon_threadsafe(self._read_soon, scope, proto, reading)
        except Exception:  # noqa: BLE001 - answered, and logged
            LOG.exception("unexpected error on %s %s", scope.method, scope.path)
            _respond(proto, _refused(*INTERNAL))

    def _reading_of(self, headers: Any, proto: Any) -> tuple[Awaitable[bytes] | None,
                                                             tuple[int, str, str] | None]:
        """How the body is to be read, or why it is refused unread: no
        reading for a request that has no body (RFC 9112, 6.3: neither a
        ``Transfer-Encoding`` nor a ``Content-Length`` other than 0)."""
        if headers.get("transfer-encoding") is not None:
            return self._chunks(proto), None
        declared = headers.get("content-length")
        if declared is None:
            return None, None
        try:
            length = int(declared)
        except ValueError:
            return None, BAD_LENGTH
        if length < 0:
            return None, BAD_LENGTH
        if length > self.max_body:
            return None, TOO_LARGE
        if length == 0:
            return None, None
        # hyper delivers no more than the declared length: taken whole, and
        # asked for now, so that it is often in by the time the loop looks.
        return proto(), None

    def _read_soon(self, scope: Any, proto: Any, reading: Awaitable[bytes]) -> None:
        task = asyncio.get_running_loop().create_task(
            self._read_then_run(scope, proto, reading))
        self._reading.add(task)  # the loop holds its tasks weakly
        task.add_done_callback(self._reading.discard)

    async def _read_then_run(self, scope: Any, proto: Any,
                             reading: Awaitable[bytes]) -> None:
        try:
            async with asyncio.timeout(self.read_timeout):
                body = await reading
        except TooLarge:
            return _respond(proto, _refused(*TOO_LARGE))
        except (TimeoutError, RuntimeError):  # RuntimeError: the client went away
            return _respond(proto, _refused(*TIMED_OUT))
        self.pool.submit(self._run, scope, proto, body)

    def _too_long(self, scope: Any) -> tuple[int, str, str] | None:
        """Upstream's ``max_header_line``, answered here with a Neutron error:
        granian refuses only far longer lines, with an empty body."""
        if len(scope.path) + len(scope.query_string) + 1 > self.max_line:
            return URI_TOO_LONG
        if any(len(name) + len(value) + 2 > self.max_line
               for name, value in scope.headers.items()):
            return HEADER_TOO_LONG
        return None

    async def _chunks(self, proto: Any) -> bytes:
        """A body of unknown length, never read far past ``max_body``."""
        parts: list[bytes] = []
        got = 0
        async for chunk in proto:
            got += len(chunk)
            if got > self.max_body:
                raise TooLarge()
            parts.append(chunk)
        return b"".join(parts)

    def _run(self, scope: Any, proto: Any, body: bytes) -> None:
        """The app's answer, given from this thread."""
        try:
            answer = self._call(wsgi_environ(scope, body))
        except Exception:
            # What escaped the app (a WSGI middleware's failure): granian
            # would answer an empty 500.
            LOG.exception("unexpected error on %s %s", scope.method, scope.path)
            answer = _refused(*INTERNAL)
        _respond(proto, answer)

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
